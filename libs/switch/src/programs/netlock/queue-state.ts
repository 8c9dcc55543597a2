import type { LockMode, LockPacket } from '@lockfabric/ports';

/** Packet flags shared with the NetLock client (same bits as the server lock managers' wire). */
export const NETLOCK_FLAG_CANCEL = 1 << 0;
export const NETLOCK_FLAG_SWITCH = 1 << 1;
export const NETLOCK_FLAG_CONTINUE = 1 << 2;

/** Per-hot-lock queue state, packed in one 32-bit register so one ALU pass updates it. */
export interface QueueState {
  readonly head: number;
  readonly count: number;
  /** Entries at the head already granted (a single writer, or a run of readers). */
  readonly granted: number;
  /** Exclusive entries anywhere in the queue. */
  readonly exclusive: number;
}

export function packQueueState(s: QueueState): number {
  return (s.head | (s.count << 8) | (s.granted << 16) | (s.exclusive << 24)) >>> 0;
}

export function unpackQueueState(word: number): QueueState {
  return { head: word & 0xff, count: (word >>> 8) & 0xff, granted: (word >>> 16) & 0xff, exclusive: (word >>> 24) & 0xff };
}

/** A switch GRANT for the queue entry (machine, task, rid); `nextSlot` (in `incarnation`) is the slot a CONTINUE notify names. */
export function grantPacket(lock: number, mode: LockMode, machine: number, task: number, rid: number, nextSlot: number, more: boolean, trace: LockPacket['trace']): LockPacket {
  const packet: LockPacket = {
    type: 'grant',
    lock,
    machine,
    task,
    mode,
    incarnation: nextSlot,
    seq: rid,
    flags: NETLOCK_FLAG_SWITCH | (more ? NETLOCK_FLAG_CONTINUE : 0),
    dst: machine,
  };
  return trace ? { ...packet, trace } : packet;
}

