// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- redlock's own types are unreachable under NodeNext (see the file)
/// <reference path="./redlock-types.d.ts" />
import Redlock, { ExecutionError } from 'redlock';
import type { Redis } from 'ioredis';
import { LeaseExpiredError, LockTimeoutError } from '@lockfabric/ports';
import type { AcquireOptions, Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';

/**
 * RedLock's lease. It must outlast the longest critical section (two Redis round trips and the
 * execution time: well under 10 ms here) with room for event-loop stalls on a loaded machine,
 * yet free a crashed client's accounts soon: 5 s.
 */
// A subpath of its own (`@lockfabric/smallbank/protocol-id`): naming RedLock must not load ioredis.
export { REDLOCK_PROTOCOL_ID } from './protocol-id.js';

export const REDLOCK_LEASE_MS = 5_000;
/** Retry after a refused acquire: 2 ms plus up to 2 ms of random jitter (spreads the retries). */
export const REDLOCK_RETRY_DELAY_MS = 2;
export const REDLOCK_RETRY_JITTER_MS = 2;
const DEFAULT_TIMEOUT_MS = 2_000;

export const redlockKey = (lock: LockId): string => `lockfabric:smallbank:lock:${lock}`;

export interface RedLockGrant extends Grant {
  readonly handle: { release(): Promise<unknown> };
}

/**
 * A LockClient over the `redlock` library (one Redis, so a quorum of one). RedLock has no shared
 * mode: a shared request is taken exclusively. An acquire retries until `timeoutMs` is spent,
 * then fails with LockTimeoutError, which the transaction layer treats as an abort.
 */
export class RedLockClient implements LockClient<RedLockGrant> {
  private readonly redlock: Redlock;

  constructor(redis: Redis) {
    this.redlock = new Redlock([redis], { driftFactor: 0.01, retryCount: 0, retryDelay: REDLOCK_RETRY_DELAY_MS, retryJitter: REDLOCK_RETRY_JITTER_MS, automaticExtensionThreshold: 0 });
    // Redlock emits 'error' for refused attempts too; acquire's rejection is what matters here.
    this.redlock.on('error', () => undefined);
  }

  async acquire(lock: LockId, mode: LockMode, options?: AcquireOptions): Promise<RedLockGrant> {
    const timeoutMs = options?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const retryCount = Math.max(1, Math.ceil(timeoutMs / (REDLOCK_RETRY_DELAY_MS + REDLOCK_RETRY_JITTER_MS / 2)));
    try {
      return { lock, mode, handle: await this.redlock.acquire([redlockKey(lock)], REDLOCK_LEASE_MS, { retryCount }) };
    } catch (error) {
      if (error instanceof ExecutionError) throw new LockTimeoutError(lock, mode, timeoutMs);
      throw error;
    }
  }

  async release(grant: RedLockGrant): Promise<void> {
    try {
      await grant.handle.release();
    } catch (error) {
      // The key was gone or held by another value: the lease ran out before the release.
      if (error instanceof ExecutionError) throw new LeaseExpiredError(grant.lock, REDLOCK_LEASE_MS);
      throw error;
    }
  }
}
