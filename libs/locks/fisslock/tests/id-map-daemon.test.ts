import { describe, expect, it } from 'vitest';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import { LocalOp, decodeNodes } from '@lockfabric/lock-srvlock';
import { ConfigError } from '@lockfabric/ports';
import type { Message, NodeId } from '@lockfabric/ports';
import { ID_MAP_ERROR, ID_MAP_OP, decodeReply, idMapHost, idMapOf, LockIdTable, mapRequest } from '../src/lock-ids/index.js';
import { readFissLockOptions } from '../src/options.js';
import { fissSim } from './support/fiss-sim.js';

describe('LockIdTable (spec §6.5)', () => {
  it('maps first come first served, keeps the reverse map, and goes out of range past the capacity', () => {
    const table = new LockIdTable(2, 5);
    const ids = [9_000_000_001, 42, 2 ** 52 + 7, 5];
    expect(ids.map((id) => table.map(id))).toEqual([
      { lid: 0, fresh: true },
      { lid: 1, fresh: true },
      { lid: 2, fresh: true },
      { lid: 3, fresh: true },
    ]);
    expect(table.map(42)).toEqual({ lid: 1, fresh: false });
    expect(ids.map((_, lid) => table.appLockId(lid))).toEqual(ids);
    expect([0, 1, 2, 3].map((lid) => table.onSwitch(lid))).toEqual([true, true, false, false]);
    expect(table.appLockId(4)).toBeUndefined();
    expect(table.lookup(5)).toBe(3);
  });

  it('refuses new ids once it holds maxEntries (known ids still answer); the reverse array grows past its first size', () => {
    const small = new LockIdTable(1, 2);
    expect(small.map(10)?.lid).toBe(0);
    expect(small.map(11)?.lid).toBe(1);
    expect(small.map(12)).toBeUndefined();
    expect(small.map(11)).toEqual({ lid: 1, fresh: false });
    const big = new LockIdTable(10, 5_000);
    for (let i = 0; i < 3_000; i++) big.map(1_000_000 + 7 * i);
    expect(big.appLockId(2_999)).toBe(1_000_000 + 7 * 2_999);
    expect(() => new LockIdTable(-1, 0)).toThrow(ConfigError);
  });
});

describe('id-map daemon on the service mailbox (sim)', () => {
  const mapped = { lockIds: 'mapped' };

  /** Sends raw `message` from a client mailbox of `from` and returns the answer (undefined: none within 100 µs). */
  async function ask(sim: ReturnType<typeof fissSim>, from: NodeId, to: NodeId, message: Omit<Message, 'from' | 'to' | 'kind'>): Promise<Message | undefined> {
    const mailbox = sim.cluster.clientPorts({ node: from, client: 7 }).mailbox;
    mailbox.send({ kind: 'custom', to: { node: to, client: SERVICE_CLIENT }, ...message });
    const answer = mailbox.receive(() => true, { deadlineNs: sim.cluster.clock.nowNs() + 100_000 });
    await sim.step(200_000);
    return answer;
  }

  it('is hosted by the lowest-numbered compute node unless idMapNode names another; a wrong idMapNode is a ConfigError', () => {
    const context = { computeNodes: [3, 1, 2], ports: { self: { node: 2, client: SERVICE_CLIENT } } } as const;
    expect(idMapHost(context as never, readFissLockOptions(mapped))).toBe(1);
    expect(idMapHost(context as never, readFissLockOptions({ ...mapped, idMapNode: 3 }))).toBe(3);
    expect(idMapHost(context as never, readFissLockOptions({ ...mapped, mutantIdMapPerMachine: true }))).toBe(2);
    expect(() => idMapHost(context as never, readFissLockOptions({ ...mapped, idMapNode: 9 }))).toThrow(ConfigError);
    expect(() => readFissLockOptions({ lockIds: 'hashed' })).toThrow(/lockIds: expected one of dense, mapped/);
  });

  it('answers malformed requests with an error, ignores replies sent to it, and keeps serving', async () => {
    const sim = fissSim({ protocolOptions: mapped });
    const [host, other] = sim.nodes as [number, number];
    const daemon = idMapOf(sim.cluster.layout, host)?.daemon;
    expect(daemon?.table).toBeDefined();
    const errorOf = (m: Message | undefined) => {
      const decoded = m ? decodeReply(m) : undefined;
      return decoded?.kind === 'error' ? { code: decoded.code, detail: decoded.detail, lock: decoded.appLockId } : decoded;
    };
    expect(errorOf(await ask(sim, other, host, { lock: 0, data: Uint8Array.of(ID_MAP_OP.request) }))).toEqual({ code: ID_MAP_ERROR.malformed, detail: 'request carries no lock id (value)', lock: undefined });
    expect(errorOf(await ask(sim, other, host, { lock: 0, value: 5n, data: Uint8Array.of(ID_MAP_OP.request, 1, 2) }))).toEqual({ code: ID_MAP_ERROR.malformed, detail: 'request has 3 bytes of data, expected 1', lock: 5 });
    expect(errorOf(await ask(sim, other, host, { lock: 0, value: 2n ** 60n, data: Uint8Array.of(ID_MAP_OP.request) }))).toMatchObject({ code: ID_MAP_ERROR.malformed, detail: `lock id ${2n ** 60n} is above 2^53-1` });
    expect(errorOf(await ask(sim, other, host, { lock: 0, value: 5n, data: Uint8Array.of(0x6a) }))).toMatchObject({ code: ID_MAP_ERROR.malformed, detail: 'op 0x6a is not an id-map request' });
    expect(await ask(sim, other, host, { lock: 3, value: 5n, data: Uint8Array.of(ID_MAP_OP.reply) })).toBeUndefined();
    expect(await ask(sim, other, host, { lock: 0, value: 5n, data: Uint8Array.of(ID_MAP_OP.error, 1) })).toBeUndefined();
    expect(daemon?.stats).toMatchObject({ malformed: 4, ignored: 2, requests: 0 });
    expect(daemon?.table?.size).toBe(0);
    // still serving: a good request, then the same id again
    const good = await ask(sim, other, host, mapRequest({ node: host, client: SERVICE_CLIENT }, 2 ** 40));
    expect(good && decodeReply(good)).toEqual({ kind: 'mapped', appLockId: 2 ** 40, lid: 0 });
    expect(daemon?.stats).toMatchObject({ requests: 1, fresh: 1, outOfRange: 0 });
    await sim.stop();
  });

  it('a node that does not host the map names the host; the fallback manager still gets its own mail on the shared mailbox', async () => {
    const sim = fissSim({ protocolOptions: mapped });
    const [host, other] = sim.nodes as [number, number];
    const wrong = await ask(sim, host, other, mapRequest({ node: other, client: SERVICE_CLIENT }, 77));
    expect(wrong && decodeReply(wrong)).toEqual({ kind: 'error', appLockId: 77, code: ID_MAP_ERROR.notHost, detail: `node ${other} does not host the id map; node ${host} does` });
    expect(idMapOf(sim.cluster.layout, other)?.daemon.stats.notHost).toBe(1);
    // srvlock's topology query on the same service mailbox is answered by the fallback LockServer
    const topology = await ask(sim, other, host, { lock: 0, data: Uint8Array.of(LocalOp.topologyQuery) });
    expect(topology?.data?.[0]).toBe(LocalOp.topologyReply);
    expect(decodeNodes(topology!.data!)).toEqual([...sim.nodes]);
    await sim.stop();
  });

  it('lockIds=dense (the default) starts no daemon', async () => {
    const sim = fissSim();
    for (const node of sim.nodes) expect(idMapOf(sim.cluster.layout, node)).toBeUndefined();
    await sim.stop();
  });
});
