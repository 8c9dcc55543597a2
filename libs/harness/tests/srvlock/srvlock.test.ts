import { LockTimeoutError } from '@lockfabric/ports';
import type { Span, SpanContextRef, Trace } from '@lockfabric/ports';
import { forwardProgram } from '@lockfabric/switch';
import { describe, expect, it } from 'vitest';
import { LockTable, ServerLockClient, srvlock } from '@lockfabric/lock-srvlock';
import type { ServerGrant } from '@lockfabric/lock-srvlock';
import { createSwitchNet, runSwarmSeed } from '../../src/index.js';

const NODES = [1, 2, 3];

function recordingTrace(links: SpanContextRef[]): Trace {
  let n = 0;
  return {
    startSpan(): Span {
      const context = { traceId: 't'.repeat(32), spanId: (++n).toString(16).padStart(16, '0'), traceFlags: 1 };
      return { context, setAttribute() {}, addLink: (c) => links.push(c), recordError() {}, end() {} };
    },
  };
}

describe('LockTable (the lock server core)', () => {
  const req = (task: number, mode: 'shared' | 'exclusive', rid = task) => ({ lock: 7, mode, machine: 2, task, rid, channel: 'packet' as const });

  it('grants compatible requests, queues FIFO and hands over to the shared run at the head', () => {
    const table = new LockTable();
    expect(table.acquire(req(1, 'shared')).outcome).toBe('granted');
    expect(table.acquire(req(2, 'exclusive')).outcome).toBe('queued');
    // FIFO: a later reader does not bypass the queued writer
    expect(table.acquire(req(3, 'shared')).outcome).toBe('queued');
    expect(table.acquire(req(4, 'shared')).outcome).toBe('queued');
    expect(table.release(7, 2, 1, 1).map((r) => r.task)).toEqual([2]);
    expect(table.release(7, 2, 2, 2).map((r) => r.task)).toEqual([3, 4]);
    expect(table.acquire(req(3, 'shared')).outcome).toBe('already-held');
    expect(table.release(7, 2, 3, 3)).toEqual([]);
    expect(table.release(7, 2, 4, 4)).toEqual([]);
    expect(table.activeLocks).toBe(0);
  });

  it('a cancel withdraws a waiter without granting anyone out of turn', () => {
    const table = new LockTable();
    table.acquire(req(1, 'exclusive'));
    table.acquire(req(2, 'exclusive'));
    table.acquire(req(3, 'shared'));
    expect(table.release(7, 2, 2, 2)).toEqual([]);
    expect(table.waiters(7).map((r) => r.task)).toEqual([3]);
  });

  it('mutant: releasing one reader frees the others too', () => {
    const table = new LockTable({ mutantReleaseAllHolders: true });
    table.acquire(req(1, 'shared'));
    table.acquire(req(2, 'shared'));
    table.acquire(req(3, 'exclusive'));
    expect(table.release(7, 2, 1, 1).map((r) => r.task)).toEqual([3]); // while task 2 still reads
  });
});

describe('srvlock over the forward program', () => {
  it('uncontended: 1 packet out + 1 in per acquire and per release, all routed to the server', async () => {
    const net = createSwitchNet({ seed: 1, computeNodes: NODES, program: forwardProgram() });
    net.startServices(srvlock);
    const client = srvlock.createClient(net.clientPorts({ node: 3, client: 0 })) as ServerLockClient;
    const run = (async () => {
      await client.acquire(9, 'exclusive'); // warm-up: the topology query (mailbox, no packet)
      const before = { ...client.traffic };
      const grant = await client.acquire(10, 'exclusive');
      const afterAcquire = { ...client.traffic };
      await client.release(grant);
      return { before, afterAcquire, after: { ...client.traffic } };
    })();
    await net.scheduler.run();
    const { before, afterAcquire, after } = await run;
    expect(afterAcquire.packetsSent - before.packetsSent).toBe(1);
    expect(afterAcquire.packetsReceived - before.packetsReceived).toBe(1);
    expect(after.packetsSent - afterAcquire.packetsSent).toBe(1);
    expect(after.packetsReceived - afterAcquire.packetsReceived).toBe(1);
    const lock10 = net.sent.filter((s) => s.packet.lock === 10).map((s) => `${s.from}:${s.packet.type}->${s.packet.dst}`);
    expect(lock10).toEqual(['3:acquire->1', '1:grant->3', '3:release->1', '1:ack->3']);
    await net.stopServices();
  });

  it('handover: the waiter is granted by the release and links its acquire span to the handover span', async () => {
    const net = createSwitchNet({ seed: 2, computeNodes: NODES, program: forwardProgram() });
    net.startServices(srvlock);
    const links: SpanContextRef[] = [];
    const a = srvlock.createClient(net.clientPorts({ node: 2, client: 0 }, recordingTrace([])));
    const b = srvlock.createClient(net.clientPorts({ node: 3, client: 0 }, recordingTrace(links)));
    const order: string[] = [];
    const run = (async () => {
      const ga = await a.acquire(5, 'exclusive');
      order.push('a');
      const pb = b.acquire(5, 'shared').then((g) => (order.push('b'), g));
      await net.clock.sleep(50_000);
      order.push('a-release');
      await a.release(ga);
      await b.release(await pb);
    })();
    await net.scheduler.run();
    await run;
    expect(order).toEqual(['a', 'a-release', 'b']);
    expect(links).toHaveLength(1);
    await net.stopServices();
  });

  it('a timed-out waiter is withdrawn: the server forgets it and the lock frees normally', async () => {
    const net = createSwitchNet({ seed: 3, computeNodes: NODES, program: forwardProgram() });
    const server = { table: undefined as LockTable | undefined };
    net.startServices({
      ...srvlock,
      services: {
        compute: (ctx, o) => {
          const s = srvlock.services!.compute!(ctx, o) as unknown as { table: LockTable };
          if (ctx.ports.self.node === 1) server.table = s.table;
          return s as never;
        },
      },
    });
    const a = srvlock.createClient(net.clientPorts({ node: 2, client: 0 }));
    const b = srvlock.createClient(net.clientPorts({ node: 3, client: 0 }));
    const run = (async () => {
      const ga = await a.acquire(5, 'exclusive');
      const failure = await b.acquire(5, 'exclusive', { timeoutMs: 0.1 }).catch((e: unknown) => e);
      const waitersAfter = server.table?.waiters(5).length;
      await a.release(ga as ServerGrant);
      return { failure, waitersAfter, holdersEnd: server.table?.holders(5).length };
    })();
    await net.scheduler.run();
    const { failure, waitersAfter, holdersEnd } = await run;
    expect(failure).toBeInstanceOf(LockTimeoutError);
    expect(waitersAfter).toBe(0);
    expect(holdersEnd).toBe(0);
    await net.stopServices();
  });

  it('rejects unknown options', () => {
    const net = createSwitchNet({ seed: 1, computeNodes: NODES, program: forwardProgram() });
    expect(() => srvlock.createClient(net.clientPorts({ node: 1, client: 0 }), { nope: 1 })).toThrow(/no option/);
  });
});

// The seed sweep runs on the swarm runner (one generator, one checker path): every
// seed draws its own workload and fault mix (pauses, node kills, memory restarts, partitions,
// switch delay, a coordinator crash) and must be safe, then live after healing. CI's
// e2e/tests/cli-check-swarm.test.ts runs seeds 1–200 through the CLI; these are the next 60.
describe('srvlock under the swarm runner', () => {
  it('swarm seeds 201–260: safe, and every lock acquirable after healing', async () => {
    for (let seed = 201; seed <= 260; seed++) {
      const r = await runSwarmSeed(srvlock, seed);
      expect(r.failure, `${r.description}\n${r.failure?.detail}`).toBeUndefined();
    }
  }, 60_000);

  it('the release-all-holders mutant is caught within 40 swarm seeds', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 40 && caught === undefined; seed++) {
      if ((await runSwarmSeed(srvlock, seed, { mutantReleaseAllHolders: true })).failure?.kind === 'safety') caught = seed;
    }
    expect(caught).toBeDefined();
  });
});
