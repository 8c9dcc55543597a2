/**
 * The FissLock header on the ports' LockPacket — the client side's copy of the contract in
 * libs/switch/src/programs/fisslock/wire.ts (a protocol may not import the switch model; a test
 * checks both copies agree). See there for the field mapping.
 */
export const FLAG_HAS_AGENT = 1 << 0;
export const FLAG_INVALID = 1 << 1;
export const FLAG_GRANTED = 1 << 2;
export const FLAG_BOUNCED = 1 << 3;
export const FLAG_DUP = 1 << 4;
export const FLAG_ABORT = 1 << 5;
export const FLAG_REACHED = 1 << 6;
export const FLAG_WW_NEXT = 1 << 7;
export const FLAG_CUR_SHARED = 1 << 8;
/**
 * A void transfer entry, addressed to its own sender: the filler that takes the seq of a FREE or
 * agent GRANT that became void before the switch saw it (ReliableLink.voidOutstanding). The decider
 * routes transfer entries without reading their flags or touching a lock register, so only the
 * sequence slot is used; the receiving pool ACKs it and keeps nothing. Client-side only (bit 12 is
 * unused by the switch's copy of this contract).
 */
export const FLAG_VOID = 1 << 12;
export const ACK_STATUS_SHIFT = 9;
export const WAITER_COUNT_SHIFT = 16;
export const TASK_RID_BITS = 20;
export const RID_MASK = (1 << TASK_RID_BITS) - 1;

export type AckStatus = 'accepted' | 'bounced' | 'duplicate' | 'freed';
export const ACK_STATUSES: readonly AckStatus[] = ['accepted', 'bounced', 'duplicate', 'freed'];

export function ackStatusOf(flags: number): AckStatus {
  return ACK_STATUSES[(flags >>> ACK_STATUS_SHIFT) & 3] as AckStatus;
}

export function ackFlags(status: AckStatus): number {
  return ACK_STATUSES.indexOf(status) << ACK_STATUS_SHIFT;
}

export function taskKey(client: number, rid: number): number {
  return ((client << TASK_RID_BITS) | (rid & RID_MASK)) >>> 0;
}

export function clientOfTask(task: number): number {
  return task >>> TASK_RID_BITS;
}

/**
 * The machine whose agent recorded a ② grant, from its RELEASE (GRANTED): the switch puts its
 * `mid` register (agent machine + 1) into the ② GRANT's `incarnation`, the client echoes it.
 * Undefined when unknown (0, e.g. a grant handed out by recovery).
 */
export function grantHomeOf(release: { readonly incarnation: number }): number | undefined {
  return release.incarnation === 0 ? undefined : release.incarnation - 1;
}
