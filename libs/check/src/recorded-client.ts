import type { Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';
import type { HistoryRecorder } from './history.js';

/** A lock client whose every acquire and release is written to a history as it happens. */
export interface RecordedClient<G extends Grant> {
  /** Records the outcome; a failed acquire is recorded with its error's name and rethrown. */
  acquire(lock: LockId, mode: LockMode, timeoutMs: number): Promise<G>;
  release(grant: G): Promise<void>;
}

/**
 * Wraps a client for scripted scenarios, so the checker judges what the script did. `key` is the
 * client's history key (`clientKey(ports.self)`), `now` the clock the history is in.
 */
export function recordedClient<G extends Grant>(client: LockClient<G>, key: string, history: HistoryRecorder, now: () => number): RecordedClient<G> {
  return {
    async acquire(lock, mode, timeoutMs) {
      history.invoke(key, 'acquire', lock, mode, now());
      try {
        const grant = await client.acquire(lock, mode, { timeoutMs });
        history.ok(key, 'acquire', lock, mode, now());
        return grant;
      } catch (error) {
        history.fail(key, 'acquire', lock, mode, now(), error instanceof Error ? error.name : 'Error');
        throw error;
      }
    },
    async release(grant) {
      history.invoke(key, 'release', grant.lock, grant.mode, now());
      await client.release(grant);
      history.ok(key, 'release', grant.lock, grant.mode, now());
    },
  };
}
