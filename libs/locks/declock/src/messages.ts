import type { ClientAddress, LockId, Message, SpanContextRef } from '@lockfabric/ports';

/**
 * Messages between compute nodes (they never touch a memory node):
 *   grant  {lock, epoch = reset epoch of the releaser's FAA, value = the waiter's queue position,
 *           data = earliest remote-waiter timestamp (2 bytes, hierarchical only), trace = handover span}
 *   reset  {lock, epoch = the epoch the reset will start, value = resetting CN id (≥ 1, bits 0..7)
 *           and the full incarnation of the table it resets (bits 8..63)}
 *   ack    {kind reset, lock, epoch = the reset's new epoch, value = 0}: a compute node's RESET_ACK,
 *          from its node service to the resetting client, once none of its clients is a queue
 *          member of the lock any more and none will touch the header until the reset is over
 *
 * Every epoch field also carries, in bits 48..63, the table tag of the sender (the low 16 bits of
 * the incarnation of the lock's memory node its verbs were pinned to; 0 where nodes never
 * restart): a message about a table that was lost since must not act on its successor (§4.6).
 */
const TAG_SHIFT = 48n;
const EPOCH_MASK = (1n << TAG_SHIFT) - 1n;

/** The 16-bit tag of a memory-node incarnation that messages carry. */
export function tableTag(incarnation: number | undefined): number {
  return (incarnation ?? 0) & 0xffff;
}

function fenced(epoch: number, tag: number): bigint {
  return BigInt(epoch) | (BigInt(tag & 0xffff) << TAG_SHIFT);
}

/** The reset epoch of a message's epoch field. */
export function epochOf(message: Message): number {
  return Number((message.epoch ?? 0n) & EPOCH_MASK);
}

/** The table tag of a message's epoch field. */
export function tagOf(message: Message): number {
  return Number(((message.epoch ?? 0n) >> TAG_SHIFT) & 0xffffn);
}
export interface GrantMessage {
  readonly lock: LockId;
  readonly epoch: number;
  readonly pos: number;
  readonly remoteTs: number | undefined;
  readonly trace: SpanContextRef | undefined;
  /** Table tag of the releaser's pinned incarnation (see above); default 0. */
  readonly tag?: number;
}

export function isDeclockMessage(message: Message): boolean {
  return message.kind === 'grant' || message.kind === 'reset';
}

export function grantMessage(to: ClientAddress, grant: GrantMessage): Omit<Message, 'from'> {
  const data = grant.remoteTs === undefined ? undefined : Uint8Array.of(grant.remoteTs & 0xff, (grant.remoteTs >> 8) & 0xff);
  return {
    kind: 'grant',
    to,
    lock: grant.lock,
    epoch: fenced(grant.epoch, grant.tag ?? 0),
    value: BigInt(grant.pos),
    ...(data ? { data } : {}),
    ...(grant.trace ? { trace: grant.trace } : {}),
  };
}

export function parseGrant(message: Message): GrantMessage | undefined {
  if (message.kind !== 'grant' || message.epoch === undefined || message.value === undefined) return undefined;
  const data = message.data;
  return {
    lock: message.lock,
    epoch: epochOf(message),
    tag: tagOf(message),
    pos: Number(message.value),
    remoteTs: data && data.length === 2 ? (data[0] as number) | ((data[1] as number) << 8) : undefined,
    trace: message.trace,
  };
}

/** RESET_ACK: value 0, which no resetter id takes (ids are CN index + 1). */
export function resetAckMessage(to: ClientAddress, lock: LockId, epoch: number, tag = 0): Omit<Message, 'from'> {
  return { kind: 'reset', to, lock, epoch: fenced(epoch, tag), value: 0n };
}

export function isResetAck(message: Message): boolean {
  return message.kind === 'reset' && message.value === 0n;
}

/** A RESET announcing a reset (not an acknowledgement of one). */
export function isResetAnnouncement(message: Message): boolean {
  return message.kind === 'reset' && message.epoch !== undefined && !isResetAck(message);
}

export function resetMessage(to: ClientAddress, lock: LockId, epoch: number, resetId: number, incarnation = 0): Omit<Message, 'from'> {
  return { kind: 'reset', to, lock, epoch: fenced(epoch, tableTag(incarnation)), value: BigInt(resetId & 0xff) | (BigInt(incarnation) << 8n) };
}

/** The incarnation of the table a RESET is about (0 where nodes never restart). */
export function resetIncarnation(message: Message): number {
  return Number((message.value ?? 0n) >> 8n);
}
