import { SeededRandom } from '@lockfabric/sim';
import type { TraceRequest } from '@lockfabric/lock-catalog';
import { createKeyChooser } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';

/** Requests in the pre-run trace a switch program's queue planner profiles. */
export const PRE_RUN_TRACE_SAMPLES = 20_000;

/**
 * A pre-run trace for a switch program that plans queues offline (`planQueues` of its kind): drawn
 * from the run's own workload generator with a different seed; requesters are the run's clients,
 * round-robin. The program's planner, in its protocol module, turns it into queues.
 */
export function preRunTrace(spec: WorkloadSpec, samples = PRE_RUN_TRACE_SAMPLES): TraceRequest[] {
  const keys = createKeyChooser(spec, new SeededRandom((spec.seed ^ 0x5eed) >>> 0));
  return Array.from({ length: samples }, (_, i) => ({ lock: keys.next(), requester: String(i % Math.max(1, spec.clients)) }));
}
