import { describe, expect, it } from 'vitest';
import { scriptedSim } from './support/scripted.js';
import { verbCount, verbDelta, verbTable } from './support/verb-tally.js';
import type { VerbTable } from './support/verb-tally.js';

/** Verbs of one uncontended acquire and release by `node`'s client 0 on lock 1. */
async function uncontended(onHome: boolean) {
  const sim = scriptedSim();
  const node = onHome ? sim.home : sim.computeNodes[0]!;
  const client = sim.client({ node, client: 0 });
  let acquire: VerbTable = {};
  let release: VerbTable = {};
  const task = sim.at(0, async () => {
    const before = verbTable(sim.cluster);
    const grant = await client.acquire(1, 'exclusive');
    const held = verbTable(sim.cluster);
    acquire = verbDelta(before, held);
    await client.release(grant);
    release = verbDelta(held, verbTable(sim.cluster));
    return grant;
  });
  const [grant] = await sim.run([task]);
  return { sim, grant: grant!, acquire, release, home: String(sim.home) };
}

describe('alock: verbs without contention', () => {
  it('a local process (on the lock’s home node) issues zero verbs, on any NIC', async () => {
    const { sim, grant, acquire, release } = await uncontended(true);
    expect(grant.accessClass).toBe('local');
    expect(grant.entryKind).toBe('leader');
    expect(verbCount(acquire)).toBe(0);
    expect(verbCount(release)).toBe(0);
    expect(verbCount(verbTable(sim.cluster))).toBe(0);
  });

  it('a remote process: CAS(T_R) + WRITE(victim) + READ(T_L) to acquire, CAS(T_R) to release — 4 verbs, all to the home node', async () => {
    const { grant, acquire, release, home } = await uncontended(false);
    expect(grant.accessClass).toBe('remote');
    expect(acquire).toEqual({ [home]: { cas: 1, write: 1, read: 1 } });
    expect(release).toEqual({ [home]: { cas: 1 } });
    expect(verbCount(acquire) + verbCount(release)).toBe(4);
  });

  it('a remote hand-off: the waiter pays a failed and a successful CAS plus one WRITE to its predecessor; the releaser one WRITE', async () => {
    const sim = scriptedSim();
    const [nodeA, nodeB] = [sim.computeNodes[0]!, sim.computeNodes[1]!];
    const a = sim.client({ node: nodeA, client: 0 });
    const b = sim.client({ node: nodeB, client: 1 });
    const tables: Record<string, VerbTable> = {};
    const holderA = sim.at(0, async () => {
      const grant = await a.acquire(1, 'exclusive');
      await sim.cluster.clock.sleep(50_000);
      tables.beforeRelease = verbTable(sim.cluster);
      await a.release(grant);
      tables.afterRelease = verbTable(sim.cluster);
      return grant.entryKind;
    });
    const waiterB = sim.at(10_000, async () => {
      tables.bStart = verbTable(sim.cluster);
      const grant = await b.acquire(1, 'exclusive');
      const held = verbTable(sim.cluster);
      await b.release(grant);
      tables.bRelease = verbDelta(held, verbTable(sim.cluster));
      return grant;
    });
    const [, kindB] = await sim.run([holderA, waiterB.then((grant) => grant.entryKind)]);
    expect(kindB).toBe('passed');
    const home = String(sim.home);
    // B's 3 verbs were all issued before A released (it then spins on its own descriptor: no verbs).
    expect(verbDelta(tables.bStart!, tables.beforeRelease!)).toEqual({ [home]: { cas: 2 }, [String(nodeA)]: { write: 1 } });
    expect(verbDelta(tables.beforeRelease!, tables.afterRelease!)).toEqual({ [String(nodeB)]: { write: 1 } });
    expect(tables.bRelease).toEqual({ [home]: { cas: 1 } });
  });

  it('a remote hand-off with budget 0: the receiver re-arbitrates with WRITE(victim) + READ(T_L) before entering', async () => {
    const sim = scriptedSim();
    const [nodeA, nodeB] = [sim.computeNodes[0]!, sim.computeNodes[1]!];
    const [a, b] = [sim.client({ node: nodeA, client: 0 }, { remoteBudget: 1 }), sim.client({ node: nodeB, client: 1 }, { remoteBudget: 1 })];
    let bVerbs = {};
    const tasks = [
      sim.at(0, async () => {
        const grant = await a.acquire(1, 'exclusive');
        await sim.cluster.clock.sleep(50_000);
        await a.release(grant);
        return grant.entryKind;
      }),
      sim.at(10_000, async () => {
        const before = verbTable(sim.cluster, nodeB);
        const grant = await b.acquire(1, 'exclusive');
        bVerbs = verbDelta(before, verbTable(sim.cluster, nodeB));
        await b.release(grant);
        return grant.entryKind;
      }),
    ];
    expect(await sim.run(tasks)).toEqual(['leader', 'reacquired']);
    expect(bVerbs).toEqual({ [String(sim.home)]: { cas: 2, write: 1, read: 1 }, [String(nodeA)]: { write: 1 } });
  });

  it('local hand-offs and local waiting cost zero verbs', async () => {
    const sim = scriptedSim();
    const clients = [0, 1, 2].map((client) => sim.client({ node: sim.home, client }));
    const tasks = clients.map((client, i) =>
      sim.at(i * 100, async () => {
        const grant = await client.acquire(2, 'exclusive');
        await sim.cluster.clock.sleep(5_000);
        await client.release(grant);
        return grant.entryKind;
      }),
    );
    expect(await sim.run(tasks)).toEqual(['leader', 'passed', 'passed']);
    expect(verbCount(verbTable(sim.cluster))).toBe(0);
  });
});

describe('alock: remote peers on one node (spec A11)', () => {
  async function sameNodeHandoff(sameNodeStores: boolean) {
    const sim = scriptedSim();
    const node = sim.computeNodes[0]!;
    const [a, b] = [0, 1].map((client) => sim.client({ node, client }, { sameNodeStores }));
    const tasks = [a!, b!].map((client, i) =>
      sim.at(i * 10_000, async () => {
        const grant = await client.acquire(1, 'exclusive');
        await sim.cluster.clock.sleep(30_000);
        await client.release(grant);
        return grant.entryKind;
      }),
    );
    expect(await sim.run(tasks)).toEqual(['leader', 'passed']);
    return verbTable(sim.cluster)[String(node)] ?? {};
  }

  it('by default link and hand-over are WRITE verbs, even between clients of one node', async () => {
    expect(await sameNodeHandoff(false)).toEqual({ write: 2 });
  });

  it('with sameNodeStores they are CPU stores: no verb reaches the shared node', async () => {
    expect(await sameNodeHandoff(true)).toEqual({});
  });
});

describe('alock: grants', () => {
  it('a grant is released once; a second release is refused', async () => {
    const sim = scriptedSim();
    const client = sim.client({ node: sim.home, client: 0 });
    const task = sim.at(0, async () => {
      const grant = await client.acquire(0, 'shared');
      await client.release(grant);
      return client.release(grant).then(
        () => 'released twice',
        (error: unknown) => (error instanceof RangeError ? 'refused' : String(error)),
      );
    });
    expect(await sim.run([task])).toEqual(['refused']);
  });
});
