import type { LockPacket, NodeId } from '@lockfabric/ports';

/**
 * The FissLock header (FissLock §4.1) mapped onto the ports' `LockPacket`, which has no `rid`,
 * `src`, `cur_mode`, ACK fields or payload. The one definition of the contract: the client, the
 * agent pool and the switch decider (./switch) all read it from here.
 *
 * - `machine`: requester / grantee `mid` (ACQUIRE, RELEASE, GRANT, transfer entry: the waiter);
 *   the sender for FREE, STARVE and ACK.
 * - `task`: request key = client index (12 bits) << 20 | rid (20 bits).
 * - `agent`: `src`, the machine that sent this hop of a sequenced packet (used for ACK routing).
 * - `seq`: per-`src` sequence number of a sequenced packet; in an ACK, the acknowledged seq.
 * - `dst`: ACK → the origin (`ack_src`); transfer entry → the grantee machine.
 * - `incarnation`: `inca` (FREE, agent GRANT); position in the queue (transfer entry); ② GRANT,
 *   its GRANTED copy and the RELEASE of its holder (GRANTED): the grant's home, the `mid` register
 *   value (agent machine + 1) when the decider sent the GRANTED copy; 0 = unknown.
 * - `mode`: requested mode / next holder's mode; FREE: the mode before the free (`cur_mode`).
 * - `flags`: FLAG_* bits below; ACK status in bits 9–10; the waiter count of an agent-carrying
 *   GRANT in bits 16–31.
 * - types: acquire, release, free, grant, ack; `transfer` = one wait-queue entry of an agent
 *   transfer (the payload, which LockPacket cannot carry, travels as these packets, sequenced
 *   just before their GRANT so the GRANT's seq − count … seq − 1 name them); `notify` = STARVE.
 */
export const FLAG_HAS_AGENT = 1 << 0;
export const FLAG_INVALID = 1 << 1;
export const FLAG_GRANTED = 1 << 2;
export const FLAG_BOUNCED = 1 << 3;
export const FLAG_DUP = 1 << 4;
export const FLAG_ABORT = 1 << 5;
export const FLAG_REACHED = 1 << 6;
export const FLAG_WW_NEXT = 1 << 7;
/** `cur_mode` of an agent-carrying GRANT is shared (FREE carries it in `mode`). */
export const FLAG_CUR_SHARED = 1 << 8;
/** Sent by the fallback (out-of-range) lock manager path; the decider only routes it. */
export const FLAG_FALLBACK = 1 << 11;
/**
 * A void transfer entry, addressed to its own sender: the filler that takes the seq of a FREE or
 * agent GRANT that became void before the switch saw it (ReliableLink.voidOutstanding). The decider
 * routes transfer entries without reading their flags or touching a lock register, so only the
 * sequence slot is used; the receiving pool ACKs it and keeps nothing. The decider never reads bit 12.
 */
export const FLAG_VOID = 1 << 12;
/**
 * On a duplicate ACQUIRE the decider routes (never decides again): the decider would grant it ②
 * now — held shared, no reader block, under the incarnation bound. Within one lifetime of the lock
 * none of these can turn from false to true, so an agent that knows the first copy was decided in
 * its own lifetime knows that copy was granted ② (pool/lifetime-anchors.ts). Read-only on the switch.
 */
export const FLAG_GRANTABLE = 1 << 13;
export const ACK_STATUS_SHIFT = 9;
export const WAITER_COUNT_SHIFT = 16;
export const MAX_WAITERS_PER_TRANSFER = 0xffff;
export const TASK_RID_BITS = 20;
export const RID_MASK = (1 << TASK_RID_BITS) - 1;

/** The switch stores `mid + 1` in its 8-bit array so that 0 can mean "no agent": machines 0…254. */
export const MAX_MACHINE_ID = 254;

export type AckStatus = 'accepted' | 'bounced' | 'duplicate' | 'freed';
export const ACK_STATUSES: readonly AckStatus[] = ['accepted', 'bounced', 'duplicate', 'freed'];

export function ackStatusOf(flags: number): AckStatus {
  return ACK_STATUSES[(flags >>> ACK_STATUS_SHIFT) & 3] as AckStatus;
}

export function ackFlags(status: AckStatus): number {
  return ACK_STATUSES.indexOf(status) << ACK_STATUS_SHIFT;
}

export function waiterCountOf(flags: number): number {
  return flags >>> WAITER_COUNT_SHIFT;
}

export function taskKey(client: number, rid: number): number {
  return ((client << TASK_RID_BITS) | (rid & RID_MASK)) >>> 0;
}

export function clientOfTask(task: number): number {
  return task >>> TASK_RID_BITS;
}

/**
 * The machine whose agent recorded a ② grant, from its GRANTED copy or its holder's RELEASE
 * (GRANTED): the switch puts its `mid` register (agent machine + 1) into the ② GRANT's and the
 * copy's `incarnation`, the client echoes it. Undefined when unknown (0, e.g. a grant handed out
 * by recovery).
 */
export function grantHomeOf(packet: { readonly incarnation: number }): number | undefined {
  return packet.incarnation === 0 ? undefined : packet.incarnation - 1;
}

/** The origin of a sequenced packet (`src`). */
export function srcOf(packet: LockPacket): NodeId {
  return packet.agent ?? packet.machine;
}
