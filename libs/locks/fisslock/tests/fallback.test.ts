import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FAULTS_10, runSeed } from './support/sweep.js';
import { fissSim } from './support/fiss-sim.js';

describe('locks beyond the switch capacity fall back to ParLock managers (spec §6.6)', () => {
  it('ids ≥ switchCapacity are served by the home node’s manager; the decider only routes them and keeps no state for them', async () => {
    const sim = fissSim({ locks: 8, switchLocks: 4, computeNodes: 3 });
    const perLock = new Map<number, Set<string>>();
    const ingest = sim.sw.ingest.bind(sim.sw);
    sim.sw.ingest = (p: LockPacket, from) => {
      const before = { ...sim.sw.counters().decisions };
      const out = ingest(p, from);
      const after = sim.sw.counters().decisions;
      const set = perLock.get(p.lock) ?? new Set<string>();
      for (const k of Object.keys(after)) if (after[k] !== before[k]) set.add(k);
      perLock.set(p.lock, set);
      return out;
    };
    const [a, b, c] = sim.nodes as [number, number, number];
    const clients = [sim.client(a, 0), sim.client(b, 1), sim.client(c, 2)];
    // every lock, shared then exclusive, from every node: in range and out of range
    for (const lock of [0, 1, 5, 6, 7]) {
      for (const [i, client] of clients.entries()) {
        const mode = i === 0 ? 'exclusive' : 'shared';
        let settled = false;
        const gp = client.acquire(lock, mode).finally(() => (settled = true));
        for (let k = 0; k < 50 && !settled; k++) await sim.step(1_000_000);
        if (!settled) throw new Error(`lock ${lock} ${mode} from client ${i} not granted; decisions ${JSON.stringify(sim.sw.counters())}`);
        const g = await gp;
        expect(g.fallback !== undefined).toBe(lock >= 4);
        const released = client.release(g); // a fallback release waits for its manager's ACK
        await sim.step(2_000_000);
        await released;
      }
    }
    // out-of-range packets (requests, and the managers' GRANTs and ACKs) were only routed; in-range ones were decided
    for (const lock of [5, 6, 7]) for (const d of perLock.get(lock) ?? []) expect(['fallback-routed', 'ack-routed']).toContain(d);
    for (const lock of [0, 1]) expect(perLock.get(lock)).toContain('grant-free');
    // some out-of-range requests were home-local and sent no packet at all
    const remote = [5, 6, 7].filter((lock) => perLock.has(lock)).length;
    expect(remote).toBeGreaterThan(0);
    expect(sim.decider.lockCount()).toBe(4);
    for (let lid = 0; lid < 4; lid++) expect(sim.decider.meta(lid)).toMatchObject({ free: true, mid: undefined, inca: 0 });
    await sim.stop();
  });

  it('sweep with a small capacity and faults: locks 0–1 on the switch, 2–3 on ParLock; exclusion holds', async () => {
    for (let seed = 1; seed <= 30; seed++) {
      const r = await runSeed(seed, { locks: 4, switchLocks: 2, ops: 4, faults: FAULTS_10, maxEvents: 400_000 });
      expect(r.violations, `seed ${seed}`).toEqual([]);
      expect(r.stalled, `seed ${seed}`).toBeUndefined();
      expect(r.untyped + r.unfinished, `seed ${seed}`).toBe(0);
      expect(r.agentsPerLockMax).toBeLessThanOrEqual(1);
      expect(r.endState.problems, `seed ${seed}`).toEqual([]);
    }
  }, 60_000);
});
