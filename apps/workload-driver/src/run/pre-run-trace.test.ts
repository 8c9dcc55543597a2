import { describe, expect, it } from 'vitest';
import { switchProgramKinds } from '@lockfabric/lock-catalog';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { preRunTrace } from './pre-run-trace.js';

const zipf: WorkloadSpec = { clients: 16, locks: 10_000, readRatio: 0.5, distribution: { zipf: 0.99 }, operations: 1_000, thinkNs: 0, criticalSectionNs: 0, seed: 5 };

describe('preRunTrace (the driver side of offline queue planning)', () => {
  it('is a pure function of the workload spec, with the clients as requesters round-robin', () => {
    const trace = preRunTrace(zipf, 1_000);
    expect(trace).toEqual(preRunTrace(zipf, 1_000));
    expect(trace.slice(0, 17).map((r) => r.requester)).toEqual([...Array.from({ length: 16 }, (_, i) => String(i)), '0']);
    expect(trace.every((r) => r.lock >= 0 && r.lock < zipf.locks)).toBe(true);
    expect(preRunTrace({ ...zipf, seed: 6 }, 1_000)).not.toEqual(trace);
  });

  it('every program that plans queues puts the hottest lock of a skewed workload in a queue, within its arrays', () => {
    const planners = switchProgramKinds().filter((kind) => kind.planQueues !== undefined);
    expect(planners.length).toBeGreaterThan(0);
    for (const kind of planners) {
      const queues = kind.planQueues!(preRunTrace(zipf), () => 256);
      expect(queues.reduce((sum, q) => sum + q.size, 0)).toBeLessThanOrEqual(256);
      expect(queues.length).toBeLessThanOrEqual(256);
      // Zipf's most popular item (rank 0, unscrambled) is lock 0.
      expect(queues.map((q) => q.lock), kind.name).toContain(0);
    }
  });
});
