import type { LockId, LockMode, NodeId } from './ids.js';
import type { SpanContextRef } from './trace.js';

export type PacketType =
  | 'acquire'
  | 'release'
  | 'grant'
  | 'reject'
  | 'ack'
  | 'transfer'
  | 'free'
  | 'push-back'
  | 'notify'
  | 'probe';

export interface LockPacket {
  readonly type: PacketType;
  readonly lock: LockId;
  /** Machine that sent the packet (or, for switch-originated packets, the machine it is for). */
  readonly machine: NodeId;
  readonly task: number;
  readonly mode: LockMode;
  readonly incarnation: number;
  readonly seq: number;
  readonly flags: number;
  readonly agent?: NodeId;
  /** Destination machine for programs that route (forward, server lock managers); unset means the program decides. */
  readonly dst?: NodeId;
  readonly trace?: SpanContextRef;
}

/** A machine's link into the switch: packets in, and the packets the switch egresses to this machine. */
export interface SwitchPort {
  readonly machine: NodeId;
  send(packet: LockPacket): void;
  /** Registers a handler for packets egressed to this machine; returns an unsubscribe function. */
  onPacket(handler: (packet: LockPacket) => void): () => void;
}
