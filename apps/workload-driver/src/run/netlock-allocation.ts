import { SeededRandom } from '@lockfabric/sim';
import { allocateSwitchQueues, profileLockTrace } from '@lockfabric/lock-catalog';
import type { QueueAllocation } from '@lockfabric/lock-catalog';
import { createKeyChooser } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';

/** Requests in the pre-run trace NetLock profiles (sampled from the run's own workload generator). */
export const NETLOCK_PROFILE_SAMPLES = 20_000;

/**
 * NetLock's offline step (its paper's memory allocation): profile a pre-run trace drawn from the
 * same workload generator with a different seed, then solve the knapsack of hot-lock queues
 * within the switch's slot budget. Requesters are the run's clients, round-robin.
 */
export function planNetLockQueues(spec: WorkloadSpec, slotBudget: number, maxHotLocks: number, samples = NETLOCK_PROFILE_SAMPLES): QueueAllocation[] {
  const keys = createKeyChooser(spec, new SeededRandom((spec.seed ^ 0x5eed) >>> 0));
  const trace = Array.from({ length: samples }, (_, i) => ({ lock: keys.next(), requester: String(i % Math.max(1, spec.clients)) }));
  const allocation = allocateSwitchQueues(profileLockTrace(trace), slotBudget);
  // The switch's hot table is bounded too: keep the locks with the most requests per slot.
  if (allocation.length <= maxHotLocks) return allocation;
  const requests = new Map(profileLockTrace(trace).map((p) => [p.lock, p.requests]));
  const kept = [...allocation].sort((a, b) => (requests.get(b.lock) ?? 0) / b.size - (requests.get(a.lock) ?? 0) / a.size || a.lock - b.lock).slice(0, maxHotLocks);
  let base = 0;
  return kept
    .sort((a, b) => a.lock - b.lock)
    .map((a) => {
      const placed = { lock: a.lock, base, size: a.size };
      base += a.size;
      return placed;
    });
}
