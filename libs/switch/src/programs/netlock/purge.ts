import type { LockMode, LockPacket } from '@lockfabric/ports';
import type { RegisterArray } from '../../register-array.js';
import { grantPacket, packQueueState, unpackQueueState } from './queue-state.js';

/** The register arrays a purge rewrites (NetLock's queue state and slot arrays). */
export interface PurgeArrays {
  readonly qstate: RegisterArray;
  readonly qmode: RegisterArray;
  readonly qmachine: RegisterArray;
  readonly qtask: RegisterArray;
  readonly qrid: RegisterArray;
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
  /** Queue entries of the machine removed (held and waiting). */
  readonly removed: number;
  /** Of those, entries that held the lock (granted). */
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
  readonly granted: boolean;
}

/**
 * The control-plane half of a purge (the switch CPU rewriting registers, not a packet: the
 * one-access-per-array rule does not apply). For each queue holding an entry of `machine`, the
 * entries are read in queue order, the machine's are dropped and the rest written back compacted
 * from the same head, order kept. Granted entries were a prefix and stay one. Then grants are
 * made due as a release would: an empty granted prefix grants the new head; a shared granted
 * prefix (or a newly granted shared head) extends over the run of shared waiters behind it, up to
 * the first exclusive one. Those grants carry no CONTINUE: the purge grants the whole run itself,
 * so a dead reader that never reflected its notify cannot strand the readers behind it.
 * `emitGrants: false` is the test-only mutant that removes without granting.
 */
export function purgeMachineQueues(a: PurgeArrays, queues: readonly PurgeQueue[], machine: number, options: { readonly emitGrants: boolean }): Omit<PurgeResult, 'wasFenced'> {
  let removed = 0;
  let removedHolders = 0;
  const locks: number[] = [];
  const grants: LockPacket[] = [];
  for (const q of queues) {
    const s = unpackQueueState(a.qstate.get(q.index));
    if (s.count === 0) continue;
    const slotOf = (position: number) => q.base + ((s.head + position) % q.size);
    const entries: Entry[] = [];
    for (let i = 0; i < s.count; i++) {
      const slot = slotOf(i);
      entries.push({ mode: a.qmode.get(slot) === 1 ? 'exclusive' : 'shared', machine: a.qmachine.get(slot), task: a.qtask.get(slot), rid: a.qrid.get(slot), granted: i < s.granted });
    }
    const kept = entries.filter((e) => e.machine !== machine);
    if (kept.length === entries.length) continue;
    removed += entries.length - kept.length;
    removedHolders += entries.filter((e) => e.machine === machine && e.granted).length;
    locks.push(q.lock);
    kept.forEach((e, i) => {
      const slot = slotOf(i);
      a.qmode.set(slot, e.mode === 'exclusive' ? 1 : 0);
      a.qmachine.set(slot, e.machine);
      a.qtask.set(slot, e.task);
      a.qrid.set(slot, e.rid);
    });
    let granted = kept.filter((e) => e.granted).length;
    if (options.emitGrants && kept.length > 0) {
      const newlyGranted: number[] = [];
      if (granted === 0) newlyGranted.push(granted++);
      if ((kept[0] as Entry).mode === 'shared') {
        while (granted < kept.length && (kept[granted] as Entry).mode === 'shared') newlyGranted.push(granted++);
      }
      for (const i of newlyGranted) {
        const e = kept[i] as Entry;
        grants.push(grantPacket(q.lock, e.mode, e.machine, e.task, e.rid, q.base + ((s.head + i + 1) % q.size), false, undefined));
      }
    }
    const exclusive = kept.filter((e) => e.mode === 'exclusive').length;
    a.qstate.set(q.index, packQueueState({ head: s.head, count: kept.length, granted, exclusive }));
  }
  return { removed, removedHolders, locks, grants };
}
