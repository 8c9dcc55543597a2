import { describe, expect, it } from 'vitest';
import { LockTimeoutError } from '@lockfabric/ports';
import type { ClientPorts, Mailbox, NodeId } from '@lockfabric/ports';
import { LockIdMapError, MappedFissLockClient, idMapOf, replyLockId } from '../src/lock-ids/index.js';
import { createFissLockClient } from '../src/protocol.js';
import type { FissGrant } from '../src/client.js';
import { fissSim } from './support/fiss-sim.js';

const SPARSE = [3_000_000_019, 17, 2 ** 50 + 3, 912_345_678];

function mappedSim(extra: Record<string, string | number> = {}, switchLocks?: number) {
  const protocolOptions = { lockIds: 'mapped', ...extra };
  const sim = fissSim({ locks: 8, computeNodes: 3, protocolOptions, ...(switchLocks !== undefined ? { switchLocks } : {}) });
  const options = { policy: 'read-preferring', ...(switchLocks !== undefined ? { switchCapacity: switchLocks } : {}), ...protocolOptions };
  const client = (node: NodeId, index: number, wrap?: (ports: ClientPorts) => ClientPorts) => {
    const ports = sim.cluster.clientPorts({ node, client: index });
    const made = createFissLockClient(wrap ? wrap(ports) : ports, options);
    if (!(made instanceof MappedFissLockClient)) throw new Error('lockIds=mapped must make a MappedFissLockClient');
    return made;
  };
  /** Runs the sim until `p` settles (at most `maxSteps` × 1 ms of virtual time). */
  const settle = async <T>(p: Promise<T>, maxSteps = 50): Promise<T> => {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    for (let i = 0; i < maxSteps && !done; i++) await sim.step(1_000_000);
    return p;
  };
  return { sim, client, settle, host: sim.nodes[0] as NodeId };
}

describe('fisslock lockIds=mapped (spec §6.5–6.6, sim)', () => {
  it('clients on different machines mapping the same application id get the same lid, first come first served; grants keep the application id', async () => {
    const { sim, client, settle, host } = mappedSim();
    const [a, b, c] = sim.nodes as [number, number, number];
    const ca = client(a, 0);
    const cb = client(b, 1);
    const cc = client(c, 2);
    // arrival order at the daemon: SPARSE[0] from b, SPARSE[1] from c, then SPARSE[0] again from a
    const g1 = await settle(cb.acquire(SPARSE[0]!, 'shared'));
    const g2 = await settle(cc.acquire(SPARSE[1]!, 'exclusive'));
    const g3 = await settle(ca.acquire(SPARSE[0]!, 'shared'));
    expect([g1, g2, g3].map((g) => ({ lock: g.lock, lid: g.lid }))).toEqual([
      { lock: SPARSE[0], lid: 0 },
      { lock: SPARSE[1], lid: 1 },
      { lock: SPARSE[0], lid: 0 },
    ]);
    // the decider holds the shared lock under lid 0 and the exclusive one under lid 1
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'shared' });
    expect(sim.decider.meta(1)).toMatchObject({ free: false, mode: 'exclusive', mid: c });
    for (const [cl, g] of [[cb, g1], [cc, g2], [ca, g3]] as const) await settle(cl.release(g));
    expect(sim.decider.meta(0).free && sim.decider.meta(1).free).toBe(true);
    // one daemon lookup per client and id; the second acquire of an id hits the cache
    const again = await settle(cb.acquire(SPARSE[0]!, 'exclusive'));
    expect(again.lid).toBe(0);
    expect(cb.traffic).toMatchObject({ lookups: 1, cacheHits: 1, requestsSent: 1, retries: 0 });
    expect(ca.traffic).toMatchObject({ lookups: 1, cacheHits: 0 });
    const table = idMapOf(sim.cluster.layout, host)?.daemon.table;
    expect([0, 1].map((lid) => table?.appLockId(lid))).toEqual([SPARSE[0], SPARSE[1]]);
    await settle(cb.release(again));
    await sim.stop();
  });

  it('ids past the switch capacity get out-of-range lids and are served by the ParLock fallback; the decider keeps no state for them', async () => {
    const { sim, client, settle, host } = mappedSim({}, 2);
    const [a, b] = sim.nodes as [number, number];
    const ca = client(a, 0);
    const cb = client(b, 1);
    const grants: FissGrant[] = [];
    for (const id of SPARSE) grants.push(await settle(ca.acquire(id, 'exclusive')));
    expect(grants.map((g) => g.lid)).toEqual([0, 1, 2, 3]);
    expect(grants.map((g) => g.fallback !== undefined)).toEqual([false, false, true, true]);
    expect(grants.map((g) => g.lock)).toEqual(SPARSE);
    // a conflicting out-of-range request from another machine waits for the fallback manager's release
    let second: FissGrant | undefined;
    const waiting = cb.acquire(SPARSE[3]!, 'exclusive').then((g) => (second = g));
    await sim.step(2_000_000);
    expect(second).toBeUndefined();
    for (const g of grants) await settle(ca.release(g));
    await settle(waiting);
    expect(second).toMatchObject({ lock: SPARSE[3], lid: 3 });
    expect(second?.fallback).toBeDefined();
    await settle(cb.release(second!));
    expect(idMapOf(sim.cluster.layout, host)?.daemon.stats).toMatchObject({ fresh: 4, outOfRange: 2 });
    expect(sim.decider.lockCount()).toBe(2);
    for (const lid of [0, 1]) expect(sim.decider.meta(lid)).toMatchObject({ free: true, mid: undefined });
    await sim.stop();
  });

  it('a lost daemon reply is retried', async () => {
    const { sim, client, settle } = mappedSim({ idMapRetryNs: 20_000 });
    const [, b] = sim.nodes as [number, number];
    let dropped = 0;
    // drops the first id-map reply this client's mailbox hands out, as if the network lost it
    const lossy = (ports: ClientPorts): ClientPorts => {
      const inner = ports.mailbox;
      const mailbox: Mailbox = {
        self: inner.self,
        send: (m) => inner.send(m),
        receive: async (match, options) => {
          for (;;) {
            const m = await inner.receive(match, options);
            if (m && dropped === 0 && replyLockId(m) !== undefined) {
              dropped++;
              continue;
            }
            return m;
          }
        },
      };
      return { ...ports, mailbox };
    };
    const cb = client(b, 0, lossy);
    const g = await settle(cb.acquire(SPARSE[2]!, 'exclusive'));
    expect(dropped).toBe(1);
    expect(g).toMatchObject({ lock: SPARSE[2], lid: 0 });
    expect(cb.traffic).toMatchObject({ lookups: 1, requestsSent: 2, retries: 1 });
    await settle(cb.release(g));
    await sim.stop();
  });

  it('a reply to a resent request that comes after its lookup ended is taken out of the mailbox, not left there', async () => {
    // resent before the first reply can arrive (one message hop is about 1.5 µs)
    const { sim, client, settle } = mappedSim({ idMapRetryNs: 1_000 });
    const [, b] = sim.nodes as [number, number];
    const cb = client(b, 0);
    const first = await settle(cb.acquire(SPARSE[0]!, 'exclusive'));
    expect(cb.traffic.retries).toBeGreaterThan(0);
    await settle(cb.release(first)); // meanwhile the resent request's reply arrives and is queued
    const second = await settle(cb.acquire(SPARSE[1]!, 'exclusive'));
    // the next lookup's end took it out; only the twins of the newest lookup may wait for the one after
    expect(cb.traffic.staleReplies).toBeGreaterThan(0);
    const queued = await sim.cluster.clientPorts({ node: b, client: 0 }).mailbox.receive((m) => replyLockId(m) === SPARSE[0], { deadlineNs: sim.cluster.clock.nowNs() });
    expect(queued).toBeUndefined();
    await settle(cb.release(second));
    await sim.stop();
  });

  it('an unreachable daemon ends the acquire with LockIdMapError, or LockTimeoutError at the acquire deadline; both name the application id', async () => {
    const { sim, client, settle, host } = mappedSim({ idMapRetryNs: 10_000, idMapAttempts: 3 });
    const [, b] = sim.nodes as [number, number];
    await idMapOf(sim.cluster.layout, host)?.daemon.stop(); // the host's daemon is gone; b still knows it as the host
    const cb = client(b, 0);
    const failure = await settle(cb.acquire(SPARSE[1]!, 'exclusive')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(LockIdMapError);
    expect(failure).toMatchObject({ code: 'LOCK_ID_MAP', lock: SPARSE[1], failure: 'unreachable' });
    expect(cb.traffic).toMatchObject({ lookups: 1, requestsSent: 3, retries: 2 });
    const slow = client(b, 1);
    const timedOut = await settle(slow.acquire(SPARSE[0]!, 'shared', { timeoutMs: 0.025 })).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    expect(timedOut).toMatchObject({ lock: SPARSE[0], timeoutMs: 0.025 });
    expect(slow.traffic.requestsSent).toBe(2); // 10 µs + 20 µs of waiting passes the 25 µs deadline
    await sim.stop();
  });
});
