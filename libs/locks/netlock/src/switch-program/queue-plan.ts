import { allocateSwitchQueues, profileLockTrace } from './allocation.js';
import type { QueueAllocation } from './allocation.js';
import type { LockId } from '@lockfabric/ports';

/** One request of a pre-run trace: which lock, asked for by whom. */
export interface TraceRequest {
  readonly lock: LockId;
  readonly requester: string;
}

/**
 * NetLock's offline step (its memory allocation; FissLock §2.1 describes NetLock): profile a pre-run trace, then solve the
 * knapsack of hot-lock queues within the switch's slot budget. The switch's hot table is bounded
 * too: past `maxHotLocks`, keep the locks with the most requests per slot, packed back to back.
 */
export function planHotLockQueues(trace: readonly TraceRequest[], slotBudget: number, maxHotLocks: number): QueueAllocation[] {
  const profile = profileLockTrace(trace);
  const allocation = allocateSwitchQueues(profile, slotBudget);
  if (allocation.length <= maxHotLocks) return allocation;
  const requests = new Map(profile.map((p) => [p.lock, p.requests]));
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

/**
 * The plan for a running switch, sized by its register arrays (`arrayLength` reads their lengths
 * from the switch's description): slots are the `netlock.qmode` entries, hot locks `netlock.qstate`.
 */
export function planQueuesForSwitch(trace: readonly TraceRequest[], arrayLength: (name: string) => number): QueueAllocation[] {
  return planHotLockQueues(trace, arrayLength('netlock.qmode'), arrayLength('netlock.qstate'));
}
