import { describe, expect, it } from 'vitest';
import type { HierarchicalClient } from '../src/index.js';
import { declock } from '../src/index.js';
import { delta, scriptedCluster } from './sim-script.js';
import { sweepRun } from './sweep-support.js';

// DecLock Fig. 14: who gets the lock after a local holder. Three clients of node 0 wait locally
// (b, c, d, in that order) before a remote client r of node 1 queues; then a, the holder, leaves.
const quiet = { syncPeriodNs: 0 };

async function grantOrder(options: Record<string, string | number | boolean>): Promise<{ order: string[]; localHandoffs: number }> {
  const s = scriptedCluster(declock);
  const opts = { ...quiet, ...options };
  const [a, b, c, d] = [0, 1, 2, 3].map((id) => s.client(0, id, opts));
  const r = s.client(1, 4, opts);
  const order: string[] = [];
  await s.run(async () => {
    const ga = await a!.acquire(0, 'exclusive');
    const hold = (name: string, client: typeof r) =>
      client.acquire(0, 'exclusive').then(async (g) => {
        order.push(name);
        await s.sleep(2_000);
        await client.release(g);
      });
    const local = [hold('b', b!), hold('c', c!), hold('d', d!)];
    await s.sleep(10_000);
    const remote = hold('r', r);
    await s.sleep(10_000);
    await a!.release(ga);
    await Promise.all([...local, remote]);
  });
  return { order, localHandoffs: (a as HierarchicalClient).computeNode.localHandoffs };
}

describe('declock handoff policies (DecLock Fig. 14)', () => {
  it('timestamp (DecLock): local waiters earlier than the remote one are handed the lock locally', async () => {
    expect(await grantOrder({})).toEqual({ order: ['b', 'c', 'd', 'r'], localHandoffs: 3 });
  });

  it('remote-prefer: never a local handoff; the remote waiter goes first and each local waiter retakes the CQL lock', async () => {
    expect(await grantOrder({ handoff: 'remote-prefer' })).toEqual({ order: ['r', 'b', 'c', 'd'], localHandoffs: 0 });
  });

  it('local-prefer: every local waiter before the remote one', async () => {
    expect(await grantOrder({ handoff: 'local-prefer' })).toEqual({ order: ['b', 'c', 'd', 'r'], localHandoffs: 3 });
  });

  it('local-bound k=1: one local grant per CQL ownership, then the remote waiter; mutant without the bound is caught', async () => {
    expect(await grantOrder({ handoff: 'local-bound', localBound: 1 })).toEqual({ order: ['b', 'r', 'c', 'd'], localHandoffs: 2 });
    expect((await grantOrder({ handoff: 'local-bound', localBound: 1, mutantNoGrantLimit: true })).order).toEqual(['b', 'c', 'd', 'r']);
  });

  it('remote-prefer, uncontended on the node: a local waiter costs the CQL round trip a local handoff saves (FAA to enqueue, FAA + READ to release)', async () => {
    const s = scriptedCluster(declock);
    const [a, b] = [s.client(0, 0, { ...quiet, handoff: 'remote-prefer' }), s.client(0, 1, { ...quiet, handoff: 'remote-prefer' })];
    const counts = await s.run(async () => {
      const ga = await a.acquire(0, 'exclusive');
      const pending = b.acquire(0, 'exclusive');
      await s.sleep(10_000);
      const v0 = s.verbs();
      await a.release(ga);
      const gb = await pending;
      const handoff = delta(s.verbs(), v0);
      await b.release(gb);
      return handoff;
    });
    // a's release (FAA + READ) and b's own enqueue (FAA); a local handoff would have cost none.
    expect(counts).toEqual({ faa: 2, read: 1 });
  });

  it('option checks: non-timestamp policies are phase-fair; localBound only with local-bound', () => {
    const s = scriptedCluster(declock);
    expect(() => s.client(0, 0, { handoff: 'local-bound', policy: 'tf' })).toThrow(/phase-fair/);
    expect(() => s.client(0, 0, { handoff: 'local-prefer', localBound: 2 })).toThrow(/only with handoff=local-bound/);
  });

  it('simulation sweep with crashes: exclusion and liveness under each policy', async () => {
    const policies = ['remote-prefer', 'local-prefer', 'local-bound'] as const;
    let crashes = 0;
    for (let seed = 1; seed <= 24; seed++) {
      const handoff = policies[seed % 3]!;
      const crashing = seed % 2 === 0;
      const run = await sweepRun(declock, seed, {
        protocolOptions: { handoff, ...(crashing ? { acquireTimeoutNs: 200_000, acquireTimeoutStaggerNs: 50_000, suspectAfterNs: 1_000_000 } : {}) },
        ...(crashing ? { crashProbability: 0.02, spec: { timeoutMs: 5 } } : {}),
      });
      expect(run.swarm.failure, run.why).toBeUndefined();
      expect(Object.keys(run.result!.verdict.liveness.counts.acquireErrors).filter((e) => e !== 'LockTimeoutError'), run.why).toEqual([]);
      crashes += run.result!.crashed.size;
    }
    expect(crashes).toBeGreaterThan(0);
  }, 120_000);
});
