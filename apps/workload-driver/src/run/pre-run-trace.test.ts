import { describe, expect, it } from 'vitest';
import { switchProgramKinds } from '@lockfabric/lock-catalog';
import { switchQueueInstaller } from '@lockfabric/lock-catalog-control';
import type { SwitchControlCaller } from '@lockfabric/control';
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

  it('every program that plans queues has an installer that sends the planned queues over the switch control service', async () => {
    const planners = switchProgramKinds().filter((kind) => kind.planQueues !== undefined);
    for (const kind of planners) {
      const install = switchQueueInstaller(kind.name);
      expect(install, kind.name).toBeDefined();
      const queues = kind.planQueues!(preRunTrace(zipf), () => 256);
      const sent: unknown[] = [];
      const caller: SwitchControlCaller = {
        address: 'switch:1',
        call: async (method, request) => {
          sent.push([method.name, (request as unknown as { queues: { lock: number; base: number; size: number }[] }).queues.map((q) => ({ lock: q.lock, base: q.base, size: q.size }))]);
          return { hotLocks: queues.length, slots: 7 } as never;
        },
        close: () => undefined,
      };
      expect(await install!(caller, queues)).toEqual({ hotLocks: queues.length, slots: 7 });
      expect(sent).toEqual([['InstallNetLockQueues', queues.map((q) => ({ lock: q.lock, base: q.base, size: q.size }))]]);
    }
    // programs that plan nothing install nothing
    for (const kind of switchProgramKinds().filter((k) => k.planQueues === undefined)) expect(switchQueueInstaller(kind.name), kind.name).toBeUndefined();
  });
});
