/**
 * What one failure did to a run, read from its history: the operations whose outcome is unknown
 * because their client died (Jepsen's *info*), the locks the failed clients held or waited for,
 * and how long the survivors waited to be granted those locks again.
 *
 * A lock is *affected* when a failed client held it (acquire ok, no release invoke) or waited for
 * it (acquire invoked, never completed) at the failure, or when a survivor was waiting for it at the
 * failure (a lock the failed node held in the stretch of history that died with it shows up so). It is *recovered* at the first grant to a
 * surviving client after the failure, and *unrecovered* when a survivor wanted it (an acquire
 * pending at the failure or invoked after it) and never got it. An affected lock no survivor asked
 * for afterwards is neither: nothing shows whether it was free.
 *
 * A node's history may end before its failure (it streams its history now and then; what it
 * recorded after its last delivery died with it). Then what it held is known only at `historyEndNs`,
 * and a lock a survivor was granted between that and the failure was evidently released in the
 * lost stretch: it is not counted as affected.
 */
import { HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { FLAG_RELEASE, PHASE_INVOKE, PHASE_OK } from './history.js';

export interface FailureImpact {
  /** Operations (acquires and releases) of failed clients invoked and never completed. */
  readonly unknownOps: number;
  /** Locks a failed client held or waited for at the failure, or a survivor waited for then; ascending. */
  readonly affectedLocks: readonly number[];
  /** Affected locks granted to a survivor after the failure. */
  readonly recoveredLocks: number;
  /** Affected locks a survivor asked for after the failure and never got, ascending. */
  readonly unrecoveredLocks: readonly number[];
  /** Longest wait from the failure to the first survivor grant of an affected lock; undefined when none was recovered. */
  readonly recoveryNs?: number;
}

/**
 * `failed` tells whether a client failed (its history ends at or before `failedAtNs`, as far as it
 * reached the checker). Events of failed clients after `failedAtNs` are ignored.
 */
export function failureImpact(history: HistoryInput, failed: (client: string) => boolean, failedAtNs: number, historyEndNs = failedAtNs): FailureImpact {
  const h = HistoryColumns.from(history);
  const failedIndex = h.clientNames.map((name) => failed(name));
  /** Per failed client and op kind: the pending invoke's lock (key `client/op`). */
  const pending = new Map<string, number>();
  /** Per failed client: locks held. */
  const held = new Map<number, Set<number>>();
  /** Per survivor: acquires pending (client → lock), to know who waits at the failure. */
  const survivorPending = new Map<number, number>();
  const wantedAfter = new Set<number>();
  const firstGrantAfter = new Map<number, number>();
  /** Locks granted to a survivor after the failed clients' history ended and before the failure. */
  const grantedInGap = new Set<number>();
  let affected: Set<number> | undefined;
  let waitingAtFailure: number[] | undefined;

  const snapshot = (): Set<number> => {
    const locks = new Set<number>();
    for (const set of held.values()) for (const lock of set) locks.add(lock);
    for (const [key, lock] of pending) if (key.endsWith('/a')) locks.add(lock);
    for (const lock of survivorPending.values()) wantedAfter.add(lock);
    waitingAtFailure = [...survivorPending.values()];
    return locks;
  };

  for (let i = 0; i < h.length; i++) {
    const t = h.times[i] as number;
    if (affected === undefined && t > failedAtNs) affected = snapshot();
    const client = h.clients[i] as number;
    const lock = h.locks[i] as number;
    const flags = h.flags[i] as number;
    const release = (flags & FLAG_RELEASE) !== 0;
    const phase = flags >> 2;
    if (failedIndex[client]) {
      if (affected !== undefined) continue;
      const key = `${client}/${release ? 'r' : 'a'}`;
      if (phase === PHASE_INVOKE) {
        pending.set(key, lock);
        if (release) held.get(client)?.delete(lock);
        continue;
      }
      pending.delete(key);
      if (!release && phase === PHASE_OK) {
        const set = held.get(client) ?? new Set<number>();
        set.add(lock);
        held.set(client, set);
      }
      continue;
    }
    if (release) continue;
    if (phase === PHASE_INVOKE) {
      survivorPending.set(client, lock);
      if (affected !== undefined) wantedAfter.add(lock);
      continue;
    }
    survivorPending.delete(client);
    if (phase !== PHASE_OK) continue;
    if (t > historyEndNs && t <= failedAtNs) grantedInGap.add(lock);
    if (affected !== undefined && !firstGrantAfter.has(lock)) firstGrantAfter.set(lock, t);
  }
  affected ??= snapshot();
  for (const lock of grantedInGap) affected.delete(lock);
  for (const lock of waitingAtFailure ?? survivorPending.values()) affected.add(lock);

  let recoveryNs: number | undefined;
  let recoveredLocks = 0;
  const unrecoveredLocks: number[] = [];
  for (const lock of affected) {
    const granted = firstGrantAfter.get(lock);
    if (granted !== undefined) {
      recoveredLocks++;
      recoveryNs = Math.max(recoveryNs ?? 0, granted - failedAtNs);
    } else if (wantedAfter.has(lock)) {
      unrecoveredLocks.push(lock);
    }
  }
  return {
    unknownOps: pending.size,
    affectedLocks: [...affected].sort((a, b) => a - b),
    recoveredLocks,
    unrecoveredLocks: unrecoveredLocks.sort((a, b) => a - b),
    ...(recoveryNs !== undefined ? { recoveryNs } : {}),
  };
}
