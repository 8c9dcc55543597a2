import type { WorkloadSpec } from '@lockfabric/workloads';
import { mulberry32 } from '@lockfabric/random';

/** mulberry32, so each seed's workload shape is fixed. */
const generator = mulberry32;

export interface SweepCase {
  readonly spec: WorkloadSpec;
  readonly computeNodes: number;
  readonly colocatedClients: number;
}

/** A small, hot workload drawn from `seed`: 4–12 clients, 1–8 locks, 100–300 operations, mixed modes. */
export function sweepCase(seed: number, overrides: Partial<WorkloadSpec> = {}): SweepCase {
  const next = generator(seed * 7919 + 17);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)] as T;
  const clients = 4 + Math.floor(next() * 9);
  return {
    spec: {
      clients,
      locks: 1 + Math.floor(next() * 8),
      readRatio: pick([0, 0.5, 0.9]),
      distribution: pick(['uniform', { zipf: 0.99 }] as const),
      operations: 100 + Math.floor(next() * 201),
      thinkNs: Math.floor(next() * 2_000),
      criticalSectionNs: 200 + Math.floor(next() * 3_000),
      seed,
      // Some seeds time out often (waiters give up while queued), others never.
      timeoutMs: pick([0.01, 0.05, 5]),
      ...overrides,
    },
    computeNodes: 2 + Math.floor(next() * 2),
    colocatedClients: pick([0, 0, 1, 2]),
  };
}
