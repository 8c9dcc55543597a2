import type { WorkloadSpec } from '@lockfabric/workloads';

/**
 * Operations a live bench runs, untimed, before the run it reports. A service process that has
 * not yet run a protocol executes that path in V8's interpreter and baseline code: on a fresh
 * local cluster the first 500 of 5 000 uncontended ShiftLock acquires had a p50 of 596 µs, the
 * last 4 000 about 60 µs. Without a warm-up the main table showed that start-up cost as the
 * protocol's latency (2× the floor probe's, which ran after it on warm processes).
 */
export const DEFAULT_LIVE_WARMUP_OPS = 2_000;

/** What the warm-up did: reported, never merged into the run's figures. */
export interface WarmUpReport {
  readonly operations: number;
  readonly acquires: number;
  /** Exclusion violations the checker found in the warm-up's history (it is checked like any run). */
  readonly violations: number;
}

/**
 * The warm-up's workload: the run's clients, locks, mix and distribution, `operations` in all and
 * no duration limit. None for transactional and application workloads (their operations count
 * something else, and they load data the run must find untouched) or for no operations.
 */
export function warmUpSpec(spec: WorkloadSpec, operations: number): WorkloadSpec | undefined {
  if (operations <= 0 || spec.transactions || spec.application) return undefined;
  const { durationMs: _duration, ...rest } = spec;
  // every client gets at least one operation, so each client's path is warmed
  return { ...rest, operations: Math.max(operations, spec.clients) };
}
