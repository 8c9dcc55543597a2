import { describe, expect, it } from 'vitest';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { planNetLockQueues } from './netlock-allocation.js';

const zipf: WorkloadSpec = { clients: 16, locks: 10_000, readRatio: 0.5, distribution: { zipf: 0.99 }, operations: 1_000, thinkNs: 0, criticalSectionNs: 0, seed: 5 };

describe('planNetLockQueues (the driver side of NetLock’s pre-run profiling)', () => {
  it('puts the most requested locks of a skewed workload in switch queues, within the slot budget', () => {
    const queues = planNetLockQueues(zipf, 256, 4_096);
    const slots = queues.reduce((sum, q) => sum + q.size, 0);
    expect(slots).toBeLessThanOrEqual(256);
    expect(queues.length).toBeGreaterThan(0);
    // Zipf's most popular item (rank 0, unscrambled) is lock 0: it must be hot.
    expect(queues.map((q) => q.lock)).toContain(0);
    // Queues are back to back, each at most as deep as the clients that can wait on it.
    let base = 0;
    for (const q of queues) {
      expect(q.base).toBe(base);
      expect(q.size).toBeGreaterThanOrEqual(1);
      expect(q.size).toBeLessThanOrEqual(zipf.clients);
      base += q.size;
    }
  });

  it('is a pure function of the workload spec (same trace seed, same allocation)', () => {
    expect(planNetLockQueues(zipf, 128, 64)).toEqual(planNetLockQueues(zipf, 128, 64));
  });

  it('respects the switch’s bound on hot locks and keeps the queues packed', () => {
    const queues = planNetLockQueues({ ...zipf, clients: 1 }, 4_096, 10);
    expect(queues).toHaveLength(10);
    expect(queues.map((q) => q.base)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('a few uniform locks are all hot, each with one slot per client', () => {
    const queues = planNetLockQueues({ ...zipf, locks: 3, clients: 8, distribution: 'uniform' }, 4_096, 4_096);
    expect(queues).toEqual([
      { lock: 0, base: 0, size: 8 },
      { lock: 1, base: 8, size: 8 },
      { lock: 2, base: 16, size: 8 },
    ]);
  });
});
