import type { NodeId } from '@lockfabric/ports';

/** How the hook reacts to a failed recovery attempt (README "FissLock S1–S3", "A recovery that fails"). */
export interface AttemptPolicyOptions {
  /** Attempts a participant may fail in a row before it is declared dead and left out. */
  readonly culpritAttempts: number;
  /** First delay before the next attempt; doubles per attempt up to `maxRetryDelayMs`. */
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
}

export const DEFAULT_ATTEMPT_POLICY: AttemptPolicyOptions = { culpritAttempts: 2, retryDelayMs: 500, maxRetryDelayMs: 5_000 };

export interface FailedAttempt {
  /** 1 for the first attempt of the current set of failed machines. */
  readonly attempt: number;
  /** Compute nodes whose calls failed in this attempt (empty: the switch, or nothing a participant did). */
  readonly culprits: readonly NodeId[];
  /** Whether the switch the recovery must write is alive by the failure detector. */
  readonly switchAlive: boolean;
  /** Whether another recovery is queued behind this one (it will close and rewrite the switch too). */
  readonly laterQueued: boolean;
}

export type NextStep =
  /** Try the whole S1–S3 again after `delayMs`. */
  | { readonly kind: 'retry'; readonly delayMs: number }
  /** Declare these nodes dead, then run S1–S3 at once without them (their locks expire, spec §7.1). */
  | { readonly kind: 'exclude'; readonly machines: readonly NodeId[] }
  /** Stop here; the failed machines and members are carried into the next recovery. */
  | { readonly kind: 'defer'; readonly reason: string };

/**
 * What follows a failed attempt. The switch stays closed from S1 until S3 is written, so giving up
 * is never an outcome while live nodes wait on it:
 * - a compute node that fails its calls `culpritAttempts` times in a row cannot take part; it is
 *   declared dead (it fences itself on the notice naming it, memory nodes fence it) and the
 *   recovery runs again without it;
 * - otherwise the switch's control plane failed: retried with a growing delay while the switch
 *   lives; a dead switch is recovered when it restarts, and a recovery queued behind this one
 *   rewrites the switch anyway, so in both cases this one is carried into the next.
 */
export function nextStep(failure: FailedAttempt, options: AttemptPolicyOptions = DEFAULT_ATTEMPT_POLICY): NextStep {
  const delayMs = Math.min(options.maxRetryDelayMs, options.retryDelayMs * 2 ** Math.max(0, failure.attempt - 1));
  if (failure.culprits.length > 0) {
    return failure.attempt >= options.culpritAttempts ? { kind: 'exclude', machines: [...new Set(failure.culprits)].sort((a, b) => a - b) } : { kind: 'retry', delayMs };
  }
  if (!failure.switchAlive) return { kind: 'defer', reason: 'the switch is not alive; its restart runs S1–S3 again' };
  if (failure.laterQueued) return { kind: 'defer', reason: 'a later recovery is queued; it carries this one' };
  return { kind: 'retry', delayMs };
}
