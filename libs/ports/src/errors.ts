import type { LockId, LockMode } from './ids.js';
import type { VerbStatus } from './verbs.js';

/** Base of every error LockFabric raises on purpose; `code` is stable for programs, `message` is for people. */
export abstract class LockFabricError extends Error {
  abstract readonly code: string;
  /**
   * Set by errors raised in bulk on the hot path and judged by code and message alone (a verb to a
   * cut or dead node): they skip the stack capture, several times their construction cost.
   */
  static readonly stackless: boolean = false;
  constructor(message: string, options?: { cause?: unknown }) {
    const limit = Error.stackTraceLimit;
    if ((new.target as typeof LockFabricError).stackless) Error.stackTraceLimit = 0;
    super(message, options);
    Error.stackTraceLimit = limit;
    this.name = new.target.name;
  }
}

/** The message of anything thrown: an Error's own message, otherwise its string form. */
export function errorMessage(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

/** An acquire did not complete before its deadline; nothing is held. */
export class LockTimeoutError extends LockFabricError {
  readonly code = 'LOCK_TIMEOUT';
  constructor(
    readonly lock: LockId,
    readonly mode: LockMode,
    readonly timeoutMs: number,
  ) {
    super(`acquire of lock ${lock} (${mode}) did not complete within ${timeoutMs} ms`);
  }
}

/** An acquire was aborted: by the caller's signal, by recovery, or because the lock was reset. */
export class LockAbortedError extends LockFabricError {
  readonly code = 'LOCK_ABORTED';
  constructor(
    readonly lock: LockId,
    readonly reason: string,
  ) {
    super(`acquire of lock ${lock} aborted: ${reason}`);
  }
}

/** A grant was used after its lease ran out; the caller no longer holds the lock. */
export class LeaseExpiredError extends LockFabricError {
  readonly code = 'LEASE_EXPIRED';
  constructor(
    readonly lock: LockId,
    readonly leaseMs: number,
  ) {
    super(`lease on lock ${lock} expired after ${leaseMs} ms`);
  }
}

/** A verb completed with an error status, or its target node could not be reached. */
export class FabricAccessError extends LockFabricError {
  // Every verb over a cut link or to a dead node fails with one (most of a faulty swarm seed's
  // errors); protocols and the runner read status and code, the message says which verb failed.
  static override readonly stackless = true;
  readonly code = 'FABRIC_ACCESS';
  constructor(
    readonly status: VerbStatus,
    readonly detail: string,
  ) {
    super(`fabric access failed (${status}): ${detail}`);
  }
}

/**
 * A release found the lock table of its grant gone: the memory node restarted (a new incarnation,
 * an empty table) after the grant. The hold ended when the table was lost; nothing was released.
 */
export class TableLostError extends LockFabricError {
  readonly code = 'TABLE_LOST';
  constructor(
    readonly lock: LockId,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`lock ${lock}: the lock table of this grant was lost (${detail})`, options);
  }
}

/** Configuration was rejected; `issues` lists every problem, each naming the offending key. */
export class ConfigError extends LockFabricError {
  readonly code = 'CONFIG';
  constructor(readonly issues: readonly string[]) {
    super(`invalid configuration:\n  - ${issues.join('\n  - ')}`);
  }
}

/** A wire message could not be decoded or named something that does not exist. */
export class MalformedInputError extends LockFabricError {
  readonly code = 'MALFORMED_INPUT';
  constructor(
    readonly source: string,
    detail: string,
  ) {
    super(`malformed input from ${source}: ${detail}`);
  }
}

/** `release` was given a grant this client does not hold (already released, or from another client). */
export class GrantNotHeldError extends LockFabricError {
  readonly code = 'GRANT_NOT_HELD';
  constructor(
    readonly lock: LockId,
    detail: string,
  ) {
    super(`release of lock ${lock} refused: ${detail}`);
  }
}

/** A protocol's own invariant broke: a bug in LockFabric, never a consequence of input or faults. */
export class InvariantError extends LockFabricError {
  readonly code = 'INVARIANT';
  constructor(
    readonly protocol: string,
    detail: string,
  ) {
    super(`${protocol}: internal invariant broken: ${detail}`);
  }
}

/**
 * A run's clients were stopped from outside: the driver cancelled the run, the node was declared
 * dead, or a failure scenario killed the node. The abort reason of such a run's signal.
 */
export class RunAbortedError extends LockFabricError {
  readonly code = 'RUN_ABORTED';
  constructor(readonly reason: string) {
    super(reason);
  }
}
