import type { ClientAddress, LockId, Message, SpanContextRef } from '@lockfabric/ports';

/**
 * Messages between compute nodes (they never touch a memory node):
 *   grant  {lock, epoch = reset epoch of the releaser's FAA, value = the waiter's queue position,
 *           data = earliest remote-waiter timestamp (2 bytes, hierarchical only), trace = handover span}
 *   reset  {lock, epoch = the epoch the reset will start, value = resetting CN id (≥ 1)}
 *   ack    {kind reset, lock, epoch = the reset's new epoch, value = 0}: a compute node's RESET_ACK,
 *          from its node service to the resetting client, once none of its clients is a queue
 *          member of the lock any more and none will touch the header until the reset is over
 */
export interface GrantMessage {
  readonly lock: LockId;
  readonly epoch: number;
  readonly pos: number;
  readonly remoteTs: number | undefined;
  readonly trace: SpanContextRef | undefined;
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
    epoch: BigInt(grant.epoch),
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
    epoch: Number(message.epoch),
    pos: Number(message.value),
    remoteTs: data && data.length === 2 ? (data[0] as number) | ((data[1] as number) << 8) : undefined,
    trace: message.trace,
  };
}

/** RESET_ACK: value 0, which no resetter id takes (ids are CN index + 1). */
export function resetAckMessage(to: ClientAddress, lock: LockId, epoch: number): Omit<Message, 'from'> {
  return { kind: 'reset', to, lock, epoch: BigInt(epoch), value: 0n };
}

export function isResetAck(message: Message): boolean {
  return message.kind === 'reset' && message.value === 0n;
}

/** A RESET announcing a reset (not an acknowledgement of one). */
export function isResetAnnouncement(message: Message): boolean {
  return message.kind === 'reset' && message.epoch !== undefined && !isResetAck(message);
}

export function resetMessage(to: ClientAddress, lock: LockId, epoch: number, resetId: number): Omit<Message, 'from'> {
  return { kind: 'reset', to, lock, epoch: BigInt(epoch), value: BigInt(resetId) };
}
