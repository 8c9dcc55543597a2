import { LockFabricError } from '@lockfabric/ports';
import type { Grant, LockClient, LockId, Random } from '@lockfabric/ports';

/** A release the workload skipped on purpose (ShiftLock's failure study); the lock stays taken. */
export class ReleaseSkippedError extends LockFabricError {
  readonly code = 'RELEASE_SKIPPED';
  constructor(readonly lock: LockId) {
    super(`release of lock ${lock} skipped on purpose: the lock stays taken until the protocol recovers it`);
  }
}

/**
 * ShiftLock §4 (Fig. 13): after acquiring, a client skips its release with probability `p` and
 * carries on, as a client that fails inside its critical section would leave the lock. The skip
 * is a typed release failure, so the history ends the hold there (the client stops using the
 * lock) and the protocol alone must recover the lock for the others.
 */
export function skippingReleases<G extends Grant>(inner: LockClient<G>, random: Random, p: number): LockClient<G> {
  return {
    acquire: (lock, mode, options) => inner.acquire(lock, mode, options),
    release: (grant) => (random.next() < p ? Promise.reject(new ReleaseSkippedError(grant.lock)) : inner.release(grant)),
  };
}
