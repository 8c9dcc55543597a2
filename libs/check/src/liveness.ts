/**
 * Liveness and protocol-conformance checker.
 *
 * Liveness: every acquire `invoke` is followed by an `ok` or by a `fail` that names an error, and
 * every release of a held lock completes — unless the client is listed as failed. With
 * `maxWaitNs`, an acquire must also complete (either way) within that many ns of its invoke.
 *
 * Protocol errors (the history itself is wrong, whatever the lock did): an `ok`/`fail` with no
 * pending invoke, a second invoke of the same operation while one is pending, a `fail` with no
 * error, an acquire of a lock the client already holds, a release of a lock the client does not
 * hold, a release in another mode than the hold. These are never excused.
 *
 * A lock counts as held from acquire `ok` to release `invoke`, as in the exclusion checker.
 */
import type { LockMode } from '@lockfabric/ports';
import { failureTimeNs } from './failed-clients.js';
import type { FailedClients } from './failed-clients.js';
import { ClientKeyedMap, HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { FLAG_EXCLUSIVE, FLAG_RELEASE, PHASE_FAIL, PHASE_INVOKE, PHASE_OK } from './history.js';
import type { HistoryOp } from './history.js';

export type LivenessViolationKind =
  | 'acquire-incomplete'
  | 'release-incomplete'
  | 'acquire-slow'
  | 'completion-without-invoke'
  | 'duplicate-invoke'
  | 'fail-without-error'
  | 'acquire-while-held'
  | 'release-not-held'
  | 'release-mode-mismatch';

const PROTOCOL_ERRORS: ReadonlySet<LivenessViolationKind> = new Set([
  'completion-without-invoke',
  'duplicate-invoke',
  'fail-without-error',
  'acquire-while-held',
  'release-not-held',
  'release-mode-mismatch',
]);

export function isProtocolError(kind: LivenessViolationKind): boolean {
  return PROTOCOL_ERRORS.has(kind);
}

export interface LivenessViolation {
  readonly kind: LivenessViolationKind;
  readonly client: string;
  readonly lock: number;
  readonly op: HistoryOp;
  readonly mode: LockMode;
  /** Time of the event at fault (the invoke, for incomplete and slow operations). */
  readonly timeNs: number;
  /** Wait in ns, for slow acquires. */
  readonly waitNs?: number;
  readonly detail: string;
}

export interface LivenessOptions {
  readonly failedClients?: FailedClients;
  /** Longest acceptable time from acquire invoke to its ok or fail. */
  readonly maxWaitNs?: number;
  /** Violations listed in the report (all are counted); default 100. */
  readonly maxViolations?: number;
}

export interface LivenessCounts {
  readonly acquiresInvoked: number;
  readonly acquiresOk: number;
  readonly acquiresFailed: number;
  readonly releasesInvoked: number;
  readonly releasesOk: number;
  readonly releasesFailed: number;
  /** Operations left pending by failed clients, which are excused. */
  readonly excusedPending: number;
  /** Longest acquire wait (invoke to ok or fail) seen, in ns; 0 when there was none. */
  readonly maxAcquireWaitNs: number;
  /** Acquire failures by error name. */
  readonly acquireErrors: Readonly<Record<string, number>>;
}

export interface LivenessReport {
  readonly ok: boolean;
  readonly violationCount: number;
  readonly protocolErrorCount: number;
  readonly violations: readonly LivenessViolation[];
  readonly counts: LivenessCounts;
}

export function checkLiveness(history: HistoryInput, options: LivenessOptions = {}): LivenessReport {
  const maxViolations = options.maxViolations ?? 100;
  const events = HistoryColumns.from(history);
  const violations: LivenessViolation[] = [];
  let violationCount = 0;
  let protocolErrorCount = 0;
  const report = (index: number, kind: LivenessViolationKind, detail: string, waitNs?: number) => {
    violationCount++;
    if (isProtocolError(kind)) protocolErrorCount++;
    if (violations.length >= maxViolations) return;
    const { client, lock, op, mode, timeNs } = events.event(index);
    violations.push(waitNs === undefined ? { kind, client, lock, op, mode, timeNs, detail } : { kind, client, lock, op, mode, timeNs, waitNs, detail });
  };

  // Pending invokes by (client, lock * 2 + release bit) → event index; holds by (client, lock) → exclusive bit.
  const pending = new ClientKeyedMap<number>();
  const held = new ClientKeyedMap<number>();
  const acquireErrors: Record<string, number> = {};
  let acquiresInvoked = 0;
  let acquiresOk = 0;
  let acquiresFailed = 0;
  let releasesInvoked = 0;
  let releasesOk = 0;
  let releasesFailed = 0;
  let maxAcquireWaitNs = 0;

  for (let i = 0; i < events.length; i++) {
    const flag = events.flags[i] as number;
    const phase = flag >> 2;
    const isRelease = (flag & FLAG_RELEASE) !== 0;
    const client = events.clients[i] as number;
    const lock = events.locks[i] as number;
    const opKey = lock * 2 + (isRelease ? 1 : 0);
    const op = isRelease ? 'release' : 'acquire';
    if (phase === PHASE_INVOKE) {
      if (pending.has(client, opKey)) report(i, 'duplicate-invoke', `${op} invoked again while the previous one is pending`);
      pending.set(client, opKey, i);
      if (!isRelease) {
        acquiresInvoked++;
        if (held.has(client, lock)) report(i, 'acquire-while-held', 'acquire of a lock this client already holds');
        continue;
      }
      releasesInvoked++;
      const heldExclusive = held.get(client, lock);
      if (heldExclusive === undefined) report(i, 'release-not-held', 'release of a lock this client does not hold');
      else if (heldExclusive !== (flag & FLAG_EXCLUSIVE)) {
        const modes = heldExclusive ? ['shared', 'exclusive'] : ['exclusive', 'shared'];
        report(i, 'release-mode-mismatch', `release in ${modes[0]} mode of a ${modes[1]} hold`);
      }
      held.delete(client, lock);
      continue;
    }

    const invoke = pending.get(client, opKey);
    if (invoke === undefined) {
      report(i, 'completion-without-invoke', `${op} ${phase === PHASE_OK ? 'ok' : 'fail'} without a pending invoke`);
      continue;
    }
    pending.delete(client, opKey);
    const error = events.errors.get(i);
    if (phase === PHASE_FAIL && (error === undefined || error.length === 0)) report(i, 'fail-without-error', `${op} failed without naming an error`);
    if (isRelease) {
      if (phase === PHASE_OK) releasesOk++;
      else releasesFailed++;
      continue;
    }
    const waitNs = (events.times[i] as number) - (events.times[invoke] as number);
    if (waitNs > maxAcquireWaitNs) maxAcquireWaitNs = waitNs;
    if (options.maxWaitNs !== undefined && waitNs > options.maxWaitNs) {
      report(invoke, 'acquire-slow', `acquire took ${waitNs} ns, more than ${options.maxWaitNs} ns`, waitNs);
    }
    if (phase === PHASE_OK) {
      acquiresOk++;
      held.set(client, lock, flag & FLAG_EXCLUSIVE);
    } else {
      acquiresFailed++;
      const name = error || 'unknown';
      acquireErrors[name] = (acquireErrors[name] ?? 0) + 1;
    }
  }

  // Report what is still pending in time order, so the report does not depend on client numbering.
  const stillPending = [...pending.entries()].map(([, , index]) => index).sort((a, b) => a - b);
  let excusedPending = 0;
  for (const index of stillPending) {
    if (failureTimeNs(options.failedClients, events.clientName(index)) !== undefined) {
      excusedPending++;
      continue;
    }
    if ((events.flags[index] as number) & FLAG_RELEASE) report(index, 'release-incomplete', 'release never completed and its client did not fail');
    else report(index, 'acquire-incomplete', 'acquire never completed and its client did not fail');
  }

  return {
    ok: violationCount === 0,
    violationCount,
    protocolErrorCount,
    violations,
    counts: {
      acquiresInvoked,
      acquiresOk,
      acquiresFailed,
      releasesInvoked,
      releasesOk,
      releasesFailed,
      excusedPending,
      maxAcquireWaitNs,
      acquireErrors,
    },
  };
}

export function describeLivenessViolation(violation: LivenessViolation): string {
  return `${violation.kind}: ${violation.client} ${violation.op} ${violation.mode} lock ${violation.lock} at ${violation.timeNs} ns — ${violation.detail}`;
}
