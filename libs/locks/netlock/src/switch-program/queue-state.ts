import type { LockMode, LockPacket } from '@lockfabric/ports';

/** Packet flags shared with the NetLock client (same bits as the server lock managers' wire). */
export const NETLOCK_FLAG_CANCEL = 1 << 0;
export const NETLOCK_FLAG_SWITCH = 1 << 1;
export const NETLOCK_FLAG_CONTINUE = 1 << 2;
/** `ack` flag: the switch took (or had already taken) the RELEASE this ACK answers; the client stops resending it. */
export const NETLOCK_FLAG_RELEASED = 1 << 3;
/** `ack` flag on the answer to a cancel: the switch holds no entry of that request (never queued, or already released). */
export const NETLOCK_FLAG_GONE = 1 << 4;

/**
 * Most entries one granted run may hold: `released` has 7 bits and counts at most `granted - 1`
 * releases (the last one pops the run). Readers past it wait for the next run.
 */
export const NETLOCK_MAX_RUN = 128;

/** Per-hot-lock queue state, packed in one 32-bit register so one ALU pass updates it. */
export interface QueueState {
  readonly head: number;
  readonly count: number;
  /** Entries at the head granted: a single writer, or a run of readers (the granted run). */
  readonly granted: number;
  /** Holders of the granted run that released already; the run leaves the queue when the last one does. */
  readonly released: number;
  /** The newest entry (the tail) is exclusive: a reader arriving while all entries are granted may join only behind a reader. */
  readonly tailExclusive: boolean;
}

/** Layout: head bits 0–7, count 8–15, granted 16–23, released 24–30, tailExclusive bit 31. */
export function packQueueState(s: QueueState): number {
  return (s.head | (s.count << 8) | (s.granted << 16) | (s.released << 24) | (s.tailExclusive ? 1 << 31 : 0)) >>> 0;
}

export function unpackQueueState(word: number): QueueState {
  return { head: word & 0xff, count: (word >>> 8) & 0xff, granted: (word >>> 16) & 0xff, released: (word >>> 24) & 0x7f, tailExclusive: word >>> 31 === 1 };
}

/**
 * A queue entry's slot as carried in packets (`incarnation`): bits 0–15 hold slot + 1 (0 means
 * "no slot"), bits 16–31 the entry's serial (see {@link NETLOCK_SERIAL_MASK}). A switch GRANT names
 * the grantee's own slot and serial; the client echoes the tag in its RELEASE (which marks that
 * entry released) and in a CONTINUE notify (the switch checks the serial, then the slot after it).
 */
export function slotTag(slot: number, serial = 0): number {
  return ((slot + 1) | ((serial & NETLOCK_SERIAL_MASK) << 16)) >>> 0;
}

/** The slot a packet's tag names, or undefined when it names none. */
export function slotOfTag(tag: number): number | undefined {
  const slot = Number.isInteger(tag) ? (tag & 0xffff) - 1 : -1;
  return slot >= 0 ? slot : undefined;
}

/** The entry serial a packet's tag carries (0 when it carries none). */
export function serialOfTag(tag: number): number {
  return Number.isInteger(tag) ? (tag >>> 16) & NETLOCK_SERIAL_MASK : 0;
}

/** Most slots a tag can name: slot + 1 must fit the tag's low 16 bits. */
export const NETLOCK_MAX_SLOTS = 0xffff;

/**
 * Entry serials are 16 bits, drawn per hot lock at enqueue (never 0). A notify whose serial is
 * not the one its slot holds now is stale: it was sent for an earlier entry of that slot (a
 * delayed or reordered CONTINUE notify that the grantee's own RELEASE overtook). A stale notify
 * could only be mistaken for a fresh one after 65 535 more enqueues on the same lock that land
 * its slot again, while it is still in flight.
 */
export const NETLOCK_SERIAL_MASK = 0xffff;

/** The serial after `serial` (1 … 65 535, wrapping past 0). */
export function nextSerial(serial: number): number {
  return (serial % NETLOCK_SERIAL_MASK) + 1;
}

/** A switch GRANT for the queue entry (machine, task, rid, serial) in `slot`; `more` sets CONTINUE (the grantee reflects a NOTIFY). */
export function grantPacket(lock: number, mode: LockMode, machine: number, task: number, rid: number, slot: number, serial: number, more: boolean, trace: LockPacket['trace']): LockPacket {
  const packet: LockPacket = {
    type: 'grant',
    lock,
    machine,
    task,
    mode,
    incarnation: slotTag(slot, serial),
    seq: rid,
    flags: NETLOCK_FLAG_SWITCH | (more ? NETLOCK_FLAG_CONTINUE : 0),
    dst: machine,
  };
  return trace ? { ...packet, trace } : packet;
}
