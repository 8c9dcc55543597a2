import type { StopSignal } from './stop-signal.js';
import type { ClientAddress, LockId } from './ids.js';
import type { SpanContextRef } from './trace.js';

/** What a notification between clients means; protocols agree on the rest of the fields. */
export type MessageKind = 'handover' | 'grant' | 'mode-change' | 'reset' | 'wake' | 'timestamp' | 'custom';

export interface Message {
  readonly kind: MessageKind;
  readonly from: ClientAddress;
  readonly to: ClientAddress;
  readonly lock: LockId;
  /** Epoch, era or reset counter that fences this message, when the protocol has one. */
  readonly epoch?: bigint;
  readonly value?: bigint;
  readonly data?: Uint8Array;
  readonly trace?: SpanContextRef;
  /**
   * When the message reached the receiver's node, on the receiver's clock, set by the transport: the
   * RNIC receive timestamp ShiftLock starts a handover's lease from (ShiftLock §3.3). A process that
   * was descheduled after the arrival still sees when the message came.
   */
  readonly receivedNs?: number;
}

export interface ReceiveOptions {
  /** Absolute deadline on the port's clock; `receive` then resolves `undefined`. */
  readonly deadlineNs?: number;
  readonly signal?: StopSignal;
}

/** Small SENDs between clients on different (or the same) compute nodes. Delivery is unordered and may fail silently. */
export interface Mailbox {
  readonly self: ClientAddress;
  send(message: Omit<Message, 'from'>): void;
  /** The oldest queued message matching `match`, waiting for one if none is queued; `undefined` at the deadline or on abort. */
  receive(match: (message: Message) => boolean, options?: ReceiveOptions): Promise<Message | undefined>;
}
