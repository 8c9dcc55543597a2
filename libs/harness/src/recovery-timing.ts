import { timeFissLockRecovery as timeWithClock } from '@lockfabric/lock-fisslock';
import type { FissRecoveryTiming } from '@lockfabric/lock-fisslock';

export type { FissRecoveryTiming };

/** FissLock's recovery cost (its module's `timeFissLockRecovery`, FissLock §7.8) timed on this process's real clock. */
export function timeFissLockRecovery(heldLocks: number, machines = 8): Promise<FissRecoveryTiming> {
  return timeWithClock(heldLocks, machines, () => performance.now() * 1e6);
}
