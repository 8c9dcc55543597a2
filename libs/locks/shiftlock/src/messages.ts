import type { ClientAddress, LockId, Message, MessageKind, SpanContextRef } from '@lockfabric/ports';
import type { Epoch } from './lock-entry.js';

/**
 * ShiftLock's SENDs (spec §2.4), mapped onto the Mailbox `Message`:
 *
 * | type          | kind          | value                        | epoch          | data                       |
 * | Successor     | `custom`      | RelCnt the sender saw        | —              | target, sender TailPtr     |
 * | Handover      | `handover`    | curRelCnt                    | current Epoch  | target, sender, consWrt    |
 * | ModeChanged   | `mode-change` | ExpectedRelCnt               | new Epoch      | target, sender             |
 * | Recover       | `reset`       | observed RelCnt              | era            | request id                 |
 * | RecoverReply  | `reset`       | 1 accepted / 0 rejected      | era            | request id                 |
 *
 * `data` is 24 bytes, little-endian: u8 type at 0, u32 consWrt or request id at 4, u64 target
 * TailPtr at 8 (the receiving endpoint incarnation), u64 sender TailPtr at 16. `lock` doubles as
 * the spec's `lock_addr` check (A24).
 */
export const MessageType = {
  successor: 1,
  handover: 2,
  modeChanged: 3,
  recover: 4,
  recoverReply: 5,
} as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

const DATA_BYTES = 24;
const KIND_OF: Record<MessageType, MessageKind> = {
  [MessageType.successor]: 'custom',
  [MessageType.handover]: 'handover',
  [MessageType.modeChanged]: 'mode-change',
  [MessageType.recover]: 'reset',
  [MessageType.recoverReply]: 'reset',
};

export interface ShiftLockMessage {
  readonly type: MessageType;
  readonly from: ClientAddress;
  readonly lock: LockId;
  readonly value: bigint;
  readonly epoch: bigint;
  /** consWrt for Handover, request id for Recover/RecoverReply, 0 otherwise. */
  readonly count: number;
  readonly target: bigint;
  readonly sender: bigint;
  readonly trace?: SpanContextRef;
  /** When it reached this node (the transport's receive timestamp), if the transport stamps one. */
  readonly receivedNs?: number;
}

export interface OutgoingMessage {
  readonly type: MessageType;
  readonly to: ClientAddress;
  readonly lock: LockId;
  readonly value: bigint;
  readonly epoch?: bigint;
  readonly count?: number;
  readonly target?: bigint;
  readonly sender?: bigint;
  readonly trace?: SpanContextRef;
}

export function encodeMessage(message: OutgoingMessage): Omit<Message, 'from'> {
  const data = new Uint8Array(DATA_BYTES);
  const view = new DataView(data.buffer);
  view.setUint8(0, message.type);
  view.setUint32(4, Math.min(message.count ?? 0, 0xffff_ffff), true);
  view.setBigUint64(8, message.target ?? 0n, true);
  view.setBigUint64(16, message.sender ?? 0n, true);
  return {
    kind: KIND_OF[message.type],
    to: message.to,
    lock: message.lock,
    value: message.value,
    ...(message.epoch !== undefined ? { epoch: message.epoch } : {}),
    data,
    ...(message.trace ? { trace: message.trace } : {}),
  };
}

/** The ShiftLock message in `message`, or undefined when it is not one (foreign or malformed). */
export function decodeMessage(message: Message): ShiftLockMessage | undefined {
  const data = message.data;
  if (!data || data.length !== DATA_BYTES || message.value === undefined) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, DATA_BYTES);
  const type = view.getUint8(0);
  if (type < MessageType.successor || type > MessageType.recoverReply) return undefined;
  if (KIND_OF[type as MessageType] !== message.kind) return undefined;
  return {
    type: type as MessageType,
    from: message.from,
    lock: message.lock,
    value: message.value,
    epoch: message.epoch ?? 0n,
    count: view.getUint32(4, true),
    target: view.getBigUint64(8, true),
    sender: view.getBigUint64(16, true),
    ...(message.trace ? { trace: message.trace } : {}),
    ...(message.receivedNs !== undefined ? { receivedNs: message.receivedNs } : {}),
  };
}

export function epochOf(message: ShiftLockMessage): Epoch {
  return (message.epoch & 1n) === 0n ? 0 : 1;
}
