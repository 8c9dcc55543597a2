import { describe, expect, it } from 'vitest';
import type { HierarchicalClient } from '../src/index.js';
import { declock } from '../src/index.js';
import { delta, scriptedCluster } from './sim-script.js';

const quiet = { syncPeriodNs: 0 };

describe('declock (hierarchical): verbs', () => {
  it('uncontended: one FAA to acquire, FAA + READ in one doorbell to release', async () => {
    const s = scriptedCluster(declock);
    const a = s.client(0, 0, quiet);
    const counts = await s.run(async () => {
      const v0 = s.verbs();
      const g = await a.acquire(1, 'exclusive');
      const v1 = s.verbs();
      const d1 = s.doorbells();
      await a.release(g);
      return { acquire: delta(v1, v0), release: delta(s.verbs(), v1), doorbells: s.doorbells() - d1 };
    });
    expect(counts).toEqual({ acquire: { faa: 1 }, release: { faa: 1, read: 1 }, doorbells: 1 });
  });

  it('a local waiter prefetches the remote timestamp once (1 READ), then takes the lock by local handoff with no verb', async () => {
    const s = scriptedCluster(declock);
    const [a, b] = [s.client(0, 0, quiet), s.client(0, 1, quiet)];
    const counts = await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const v0 = s.verbs();
      const pending = b.acquire(0, 'exclusive');
      await s.sleep(10_000);
      const waiting = delta(s.verbs(), v0);
      const v1 = s.verbs();
      await a.release(ga);
      const gb = await pending;
      const handoff = delta(s.verbs(), v1);
      const v2 = s.verbs();
      await b.release(gb);
      return { waiting, handoff, release: delta(s.verbs(), v2) };
    });
    expect(counts).toEqual({ waiting: { read: 1 }, handoff: {}, release: { faa: 1, read: 1 } });
    expect((a as HierarchicalClient).computeNode.localHandoffs).toBe(1);
    expect(s.messages()).toBe(0);
    expect(s.headerOf(0)).toMatchObject({ qhead: 1, qsize: 0 }); // one CQL acquisition for two local ones
  });

  it('local readers join a SHARED hold with no verb; one CQL entry per node', async () => {
    const s = scriptedCluster(declock);
    const readers = [0, 1, 2].map((i) => s.client(0, i, quiet));
    const counts = await s.run(async () => {
      const g0 = await readers[0]!.acquire(0, 'shared');
      const v0 = s.verbs();
      const rest = [await readers[1]!.acquire(0, 'shared'), await readers[2]!.acquire(0, 'shared')];
      const join = delta(s.verbs(), v0);
      const mid = s.headerOf(0);
      for (const g of [...rest, g0]) await readers[0]!.release(g);
      return { join, mid };
    });
    expect(counts.join).toEqual({});
    expect(counts.mid).toMatchObject({ qsize: 1, wcnt: 0 });
    expect(s.headerOf(0)).toMatchObject({ qhead: 1, qsize: 0 });
  });
});

describe('declock (hierarchical): the timestamp rule (§5.2)', () => {
  it('a local waiter later than a remote waiter does not get a local handoff: the CQL lock goes remote first', async () => {
    const s = scriptedCluster(declock);
    const [a, late] = [s.client(0, 0, quiet), s.client(0, 1, quiet)];
    const remote = s.client(1, 2, quiet);
    const order: string[] = [];
    await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pr = remote.acquire(0, 'exclusive').then((g) => (order.push('remote'), g));
      await s.sleep(10_000); // the remote waiter's entry (with its timestamp) is on the memory node
      const pl = late.acquire(0, 'exclusive').then((g) => (order.push('late-local'), g));
      await s.sleep(10_000);
      await a.release(ga);
      const gr = await pr;
      await s.sleep(2_000);
      await remote.release(gr);
      await late.release(await pl);
    });
    expect(order).toEqual(['remote', 'late-local']);
    expect((a as HierarchicalClient).computeNode.localHandoffs).toBe(0);
  });

  it('a local waiter earlier than every remote waiter is handed the lock locally', async () => {
    const s = scriptedCluster(declock);
    const [a, early] = [s.client(0, 0, quiet), s.client(0, 1, quiet)];
    const remote = s.client(1, 2, quiet);
    const order: string[] = [];
    await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pl = early.acquire(0, 'exclusive').then((g) => (order.push('early-local'), g));
      await s.sleep(10_000);
      const pr = remote.acquire(0, 'exclusive').then((g) => (order.push('remote'), g));
      await s.sleep(10_000);
      await a.release(ga);
      const gl = await pl;
      await s.sleep(2_000);
      await early.release(gl);
      await remote.release(await pr);
    });
    expect(order).toEqual(['early-local', 'remote']);
    expect((a as HierarchicalClient).computeNode.localHandoffs).toBe(1);
  });

  it('task-fair vs phase-fair: after a writer releases to remote waiters, TF hands the duty to the first local waiter, PF to the first reader', async () => {
    const orderFor = async (policy: 'tf' | 'pf') => {
      const s = scriptedCluster(declock);
      const [a, w, r] = [s.client(0, 0, { ...quiet, policy }), s.client(0, 1, { ...quiet, policy }), s.client(0, 2, { ...quiet, policy })];
      const remote = s.client(1, 3, { ...quiet, policy });
      const order: string[] = [];
      await s.run(async () => {
        const ga = await a.acquire(0, 'exclusive');
        const pr = remote.acquire(0, 'shared').then((g) => (order.push('remote-reader'), g));
        await s.sleep(10_000);
        const pw = w.acquire(0, 'exclusive').then((g) => (order.push('local-writer'), g));
        await s.sleep(2_000);
        const prd = r.acquire(0, 'shared').then((g) => (order.push('local-reader'), g));
        await s.sleep(10_000);
        await a.release(ga);
        // Each holder keeps the lock 3 µs, then releases.
        const clients = [remote, w, r];
        await Promise.all([pr, pw, prd].map((p, i) => p.then(async (g) => (await s.sleep(3_000), clients[i]!.release(g)))));
      });
      return order;
    };
    // TF: the local writer (first in line) reacquires behind the remote reader; the local reader waits behind it.
    expect(await orderFor('tf')).toEqual(['remote-reader', 'local-writer', 'local-reader']);
    // PF: the local reader reacquires in shared mode and shares with the remote reader; the writer waits.
    expect((await orderFor('pf')).slice(0, 2).sort()).toEqual(['local-reader', 'remote-reader']);
  });
});

describe('declock (hierarchical): clock sync through the memory-node counter (§5.3)', () => {
  it('every compute node takes part in a round and adopts the same origin, within one READ latency', async () => {
    const s = scriptedCluster(declock, { computeNodes: 3 });
    const clients = [0, 1, 2].map((cn) => s.client(cn, cn, { syncPeriodNs: 1_000_000_000 }) as HierarchicalClient);
    await s.run(async () => {
      await Promise.all(clients.map(async (c, i) => c.release(await c.acquire(i + 1, 'exclusive'))));
      await s.sleep(50_000);
    });
    const clocks = clients.map((c) => c.computeNode.clock);
    expect(clocks.map((c) => c.rounds)).toEqual([1, 1, 1]);
    const origins = clocks.map((c) => c.originNs);
    expect(Math.max(...origins) - Math.min(...origins)).toBeLessThan(3_000);
    expect(s.word(0, 8 + 8 * 8)).toBe(0n); // the counter (lock 0's spare word) is back to 0
  });
});

describe('declock (hierarchical): handover spans', () => {
  it('a CQL handover across compute nodes and a local handoff both link the next holder to the releaser’s lock.handover', async () => {
    const s = scriptedCluster(declock);
    const [a, b] = [s.client(0, 0, quiet), s.client(0, 1, quiet)];
    const remote = s.client(1, 2, quiet);
    await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pb = b.acquire(0, 'exclusive');
      await s.sleep(10_000);
      const pr = remote.acquire(0, 'exclusive');
      await s.sleep(10_000);
      await a.release(ga); // b is earlier than the remote waiter: local handoff
      const gb = await pb;
      await b.release(gb); // nobody local left: the CQL lock goes to the remote node
      await remote.release(await pr);
    });
    const handovers = s.spans.filter((sp) => sp.name === 'lock.handover');
    const acquires = s.spans.filter((sp) => sp.name === 'lock.acquire');
    expect(handovers.map((h) => h.attributes['declock.handover.local'] ?? false)).toEqual([true, false]);
    // Compute nodes are nodes 1 and 2 (node 0 is the memory node).
    expect(acquires.find((sp) => sp.attributes['lockfabric.client'] === '1/1')?.links).toEqual([handovers[0]?.context]);
    expect(acquires.find((sp) => sp.attributes['lockfabric.client'] === '2/2')?.links).toEqual([handovers[1]?.context]);
    const grants = s.spans.filter((sp) => sp.name === 'lock.grant');
    expect(grants.map((g) => g.parent)).toEqual([handovers[0]?.context, handovers[1]?.context]);
  });
});
