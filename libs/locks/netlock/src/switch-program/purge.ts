import type { RegisterArray } from '@lockfabric/switch';
import type { LockMode, LockPacket } from '@lockfabric/ports';
import { NETLOCK_MAX_RUN, grantPacket, packQueueState, slotTag, unpackQueueState } from './queue-state.js';
import { requestIndex } from './request-register.js';

/** The register arrays a purge rewrites (NetLock's queue state and slot arrays). */
export interface PurgeArrays {
  readonly qstate: RegisterArray;
  readonly qmode: RegisterArray;
  readonly qmachine: RegisterArray;
  readonly qtask: RegisterArray;
  readonly qrid: RegisterArray;
  readonly qgone: RegisterArray;
  readonly qentry: RegisterArray;
  readonly qentryCheck: RegisterArray;
  /** The per-request registers (request-register.ts): a moved waiter's tag follows it. */
  readonly qctag?: RegisterArray;
  /** Per slot: the serial awaiting its release (netlock-program.ts); moved with a waiter, cleared for a dead hold. */
  readonly qlive?: RegisterArray;
}

/** One hot lock's queue: its queue-state index and its slots [base, base + size). */
export interface PurgeQueue {
  readonly lock: number;
  readonly index: number;
  readonly base: number;
  readonly size: number;
}

/** What purging one machine did. */
export interface PurgeResult {
  /** Queue entries of the machine taken out: holds it still had, and requests it was waiting on. */
  readonly removed: number;
  /** Of those, holds (granted entries it had not released). */
  readonly removedHolders: number;
  /** Hot locks whose queue changed. */
  readonly locks: readonly number[];
  /** GRANTs the removal made due, addressed (`dst`) to the grantees, in queue order per lock. */
  readonly grants: readonly LockPacket[];
  /** The machine was already fenced: an earlier purge of this run handled it (idempotent repeat). */
  readonly wasFenced: boolean;
}

interface Entry {
  readonly mode: LockMode;
  readonly machine: number;
  readonly task: number;
  readonly rid: number;
  readonly serial: number;
}

/**
 * The control-plane half of a purge (the switch CPU rewriting registers, not a packet: the
 * one-access-per-array rule does not apply). Per queue holding an entry of `machine`:
 *
 * 1. Its holds in the granted run (granted, not marked released) are marked released, as if it
 *    had sent its RELEASEs: the run's slots never move while it lasts, because surviving holders
 *    name their slot when they release. If that releases the whole run, the run leaves the queue.
 * 2. Its waiting entries are dropped and the waiters behind the run are written back compacted,
 *    order kept (none of them was granted, so no client knows its slot yet).
 * 3. Grants are made due as a release would: an empty run grants the new head; a reader run
 *    extends over the readers behind it, up to the first writer. These grants carry no CONTINUE:
 *    the purge grants the whole run itself, so a dead reader that never reflected its notify
 *    cannot strand the readers behind it.
 *
 * `emitGrants: false` is the test-only mutant that removes without granting; `keepLiveSerials:
 * false` leaves `qlive` alone (the mutant of the older release check, which kept other values there).
 */
export function purgeMachineQueues(a: PurgeArrays, queues: readonly PurgeQueue[], machine: number, options: { readonly emitGrants: boolean; readonly keepLiveSerials?: boolean }): Omit<PurgeResult, 'wasFenced'> {
  let removed = 0;
  let removedHolders = 0;
  const locks: number[] = [];
  const grants: LockPacket[] = [];
  for (const q of queues) {
    const s = unpackQueueState(a.qstate.get(q.index));
    if (s.count === 0) continue;
    const slotAt = (head: number, position: number) => q.base + ((head + position) % q.size);
    const read = (slot: number): Entry => ({ mode: a.qmode.get(slot) === 1 ? 'exclusive' : 'shared', machine: a.qmachine.get(slot), task: a.qtask.get(slot), rid: a.qrid.get(slot), serial: a.qentry.get(slot) });
    const run = Array.from({ length: s.granted }, (_, i) => ({ slot: slotAt(s.head, i), ...read(slotAt(s.head, i)) }));
    const waiting = Array.from({ length: s.count - s.granted }, (_, i) => ({ slot: slotAt(s.head, s.granted + i), ...read(slotAt(s.head, s.granted + i)) }));
    const deadHolds = run.filter((e) => e.machine === machine && a.qgone.get(e.slot) === 0);
    const deadWaits = waiting.filter((e) => e.machine === machine).length;
    if (deadHolds.length === 0 && deadWaits === 0) continue;
    removed += deadHolds.length + deadWaits;
    removedHolders += deadHolds.length;
    locks.push(q.lock);

    // 1. The dead holds count as released.
    for (const e of deadHolds) {
      a.qgone.set(e.slot, 1);
      if (options.keepLiveSerials !== false) a.qlive?.set(e.slot, 0);
    }
    let head = s.head;
    let kept: Entry[] = run;
    let granted = s.granted;
    let released = s.released + deadHolds.length;
    if (granted > 0 && released >= granted) {
      head = (head + granted) % q.size;
      kept = [];
      granted = 0;
      released = 0;
    }
    // 2. The surviving waiters, compacted behind what is left of the run.
    const survivors = waiting.filter((e) => e.machine !== machine);
    survivors.forEach((e, i) => {
      const slot = slotAt(head, granted + i);
      a.qmode.set(slot, e.mode === 'exclusive' ? 1 : 0);
      a.qmachine.set(slot, e.machine);
      a.qtask.set(slot, e.task);
      a.qrid.set(slot, e.rid);
      a.qgone.set(slot, 0);
      a.qentry.set(slot, e.serial);
      a.qentryCheck.set(slot, e.serial);
      if (options.keepLiveSerials !== false) a.qlive?.set(slot, e.serial);
      // The waiter's register still names its old slot: point it at the new one, so a resent
      // ACQUIRE or cancel of that request finds its entry.
      const register = a.qctag ? requestIndex(e.machine, e.task, e.rid) : -1;
      if (a.qctag && a.qctag.get(register) === slotTag(e.slot, e.serial)) a.qctag.set(register, slotTag(slot, e.serial));
    });
    kept = [...kept, ...survivors];
    // 3. What the removal made due.
    if (options.emitGrants && kept.length > 0) {
      const newlyGranted: number[] = [];
      if (granted === 0) newlyGranted.push(granted++);
      if ((kept[0] as Entry).mode === 'shared') {
        while (granted < kept.length && granted < NETLOCK_MAX_RUN && (kept[granted] as Entry).mode === 'shared') newlyGranted.push(granted++);
      }
      for (const i of newlyGranted) {
        const e = kept[i] as Entry;
        grants.push(grantPacket(q.lock, e.mode, e.machine, e.task, e.rid, slotAt(head, i), e.serial, false, undefined));
      }
    }
    const tailExclusive = kept.length > 0 && (kept[kept.length - 1] as Entry).mode === 'exclusive';
    a.qstate.set(q.index, packQueueState({ head, count: kept.length, granted, released: granted > 0 ? released : 0, tailExclusive }));
  }
  return { removed, removedHolders, locks, grants };
}
