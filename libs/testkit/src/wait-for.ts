import { LockFabricError, errorMessage } from '@lockfabric/ports';

export interface WaitForOptions {
  /** Give up after this long. */
  readonly timeoutMs?: number;
  /** Time between two checks. */
  readonly intervalMs?: number;
  /** What is awaited, in words, for the error message ("3 heartbeats on hb.*.*"). */
  readonly what?: string;
}

/** The awaited condition did not hold in time; `lastError` is what the last check threw, if anything. */
export class WaitForTimeoutError extends LockFabricError {
  readonly code = 'WAIT_FOR_TIMEOUT';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly lastError: unknown,
  ) {
    const cause = lastError === undefined ? '' : `; last check threw: ${errorMessage(lastError)}`;
    super(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`, { cause: lastError });
    this.name = 'WaitForTimeoutError';
  }
}

/**
 * Polls `predicate` until it returns a truthy value (which is returned) or the timeout passes. A
 * check that throws counts as "not yet" — the error is kept for the timeout message.
 */
export async function waitFor<T>(predicate: () => T | Promise<T>, options: WaitForOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 5_000, intervalMs = 10, what = 'a condition' } = options;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() >= deadline) throw new WaitForTimeoutError(what, timeoutMs, lastError);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
