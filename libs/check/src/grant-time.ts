/**
 * Grant time from a history, the same way for every lock manager.
 *
 * The FissLock paper's grant time is acquire latency minus wait time, the time a request spends
 * suspended in a wait queue behind holders. Here the wait is read off the history instead of being
 * timestamped by a lock manager: for a granted acquire issued at `t_issue` and granted at
 * `t_grant`, `t_avail` is the latest release invocation, at or before `t_grant`, of a conflicting
 * hold of the same lock by another client, and
 *
 *   wait  = max(0, t_avail − t_issue)
 *   grant = (t_grant − t_issue) − wait
 *
 * Conflicting: an exclusive request conflicts with every hold, a shared request with exclusive
 * holds only. A release invocation is where the recorded hold ends (see the exclusion checker), so
 * the wait ends when the last conflicting holder let go; what follows — the release travelling to
 * the lock manager, its queueing there, the grant travelling back — is grant time. Holds of the
 * requesting client itself are skipped: a closed-loop client releases before it asks again.
 *
 * Cost: one sweep in time order, O(n) after sorting, with per lock and mode the two latest
 * release invocations by distinct clients (the latest, and the latest by anyone else).
 */
import { HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { FLAG_EXCLUSIVE, FLAG_RELEASE, PHASE_INVOKE, PHASE_OK } from './history.js';

export interface GrantTimes {
  /** Granted acquires measured (acquires that failed or never completed are left out). */
  readonly count: number;
  /** Per granted acquire, in order of the grant: t_grant − t_issue. */
  readonly acquireNs: Float64Array;
  /** Per granted acquire: time spent behind conflicting holders. */
  readonly waitNs: Float64Array;
  /** Per granted acquire: acquireNs − waitNs. */
  readonly grantNs: Float64Array;
}

export interface GrantTimeOptions {
  /** Test-only mutant: shared holds also delay shared requests (wrong: they do not conflict). */
  readonly mutantSharedConflicts?: boolean;
}

/** The two latest release invocations on one lock in one mode, by two different clients. */
interface LatestEnds {
  latestNs: number;
  latestClient: number;
  otherNs: number;
}

function endSeenBy(ends: LatestEnds | undefined, client: number): number {
  if (!ends) return -Infinity;
  return ends.latestClient === client ? ends.otherNs : ends.latestNs;
}

function recordEnd(byLock: Map<number, LatestEnds>, lock: number, client: number, timeNs: number): void {
  const ends = byLock.get(lock);
  if (!ends) {
    byLock.set(lock, { latestNs: timeNs, latestClient: client, otherNs: -Infinity });
    return;
  }
  // Sweeping in time order, the new end is the latest; the previous latest becomes the "other"
  // end unless it was by the same client.
  if (ends.latestClient !== client) {
    ends.otherNs = ends.latestNs;
    ends.latestClient = client;
  }
  ends.latestNs = timeNs;
}

/** Acquire latency, wait and grant time of every granted acquire in `history`. */
export function grantTimes(history: HistoryInput, options: GrantTimeOptions = {}): GrantTimes {
  const h = HistoryColumns.from(history);
  const exclusiveEnds = new Map<number, LatestEnds>();
  const sharedEnds = new Map<number, LatestEnds>();
  // Pending acquire invocations: key client·2^32 + lock (client counts stay far below 2^21).
  const issued = new Map<number, number>();
  const acquireNs: number[] = [];
  const waitNs: number[] = [];
  for (let i = 0; i < h.length; i++) {
    const flags = h.flags[i] as number;
    const client = h.clients[i] as number;
    const lock = h.locks[i] as number;
    const timeNs = h.times[i] as number;
    const phase = flags >> 2;
    const exclusive = (flags & FLAG_EXCLUSIVE) !== 0;
    const key = client * 0x1_0000_0000 + lock;
    if ((flags & FLAG_RELEASE) !== 0) {
      // Any release invocation ends the recorded hold, whatever its outcome.
      if (phase === PHASE_INVOKE) recordEnd(exclusive ? exclusiveEnds : sharedEnds, lock, client, timeNs);
      continue;
    }
    if (phase === PHASE_INVOKE) {
      issued.set(key, timeNs);
      continue;
    }
    const issueNs = issued.get(key);
    issued.delete(key);
    if (phase !== PHASE_OK || issueNs === undefined) continue;
    let availNs = endSeenBy(exclusiveEnds.get(lock), client);
    if (exclusive || options.mutantSharedConflicts === true) availNs = Math.max(availNs, endSeenBy(sharedEnds.get(lock), client));
    acquireNs.push(timeNs - issueNs);
    waitNs.push(Math.max(0, availNs - issueNs));
  }
  const count = acquireNs.length;
  const grantNs = new Float64Array(count);
  for (let i = 0; i < count; i++) grantNs[i] = (acquireNs[i] as number) - (waitNs[i] as number);
  return { count, acquireNs: Float64Array.from(acquireNs), waitNs: Float64Array.from(waitNs), grantNs };
}

/** The q-quantile (0 ≤ q ≤ 1) of `values` by nearest rank; NaN when empty. Does not modify `values`. */
export function quantileOf(values: Float64Array, q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile ${q} is outside [0, 1]`);
  if (values.length === 0) return Number.NaN;
  const sorted = values.slice().sort();
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1] as number;
}
