import { create, toBinary } from '@bufbuild/protobuf';
import {
  ClientAddressSchema,
  MessageSchema,
  type ClientAddress as WireClientAddress,
  type Message as WireMessage,
} from './gen/lockfabric/v1/message_pb.js';
import { decodeWire } from './decode.js';
import { messageKinds } from './enums.js';
import { MalformedInputError, type ClientAddress, type Message } from './ports.js';
import { traceContextFromWire, traceContextToWire } from './traceparent.js';
import { U64_MASK } from './u128.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function addressToWire(address: ClientAddress): WireClientAddress {
  return create(ClientAddressSchema, { node: address.node, client: address.client });
}

function addressFromWire(address: WireClientAddress | undefined, field: string, source: string): ClientAddress {
  if (address === undefined) throw new MalformedInputError(source, `message has no '${field}' address`);
  return { node: address.node, client: address.client };
}

function u64(value: bigint, what: string): bigint {
  if (value < 0n || value > U64_MASK) throw new RangeError(`message ${what} must be an unsigned 64-bit value, got ${value}`);
  return value;
}

/** Throws RangeError when `epoch` or `value` is outside [0, 2^64): the wire carries them unsigned. */
export function messageToWire(message: Message): WireMessage {
  const out = create(MessageSchema);
  out.kind = messageKinds.toWire(message.kind);
  out.from = addressToWire(message.from);
  out.to = addressToWire(message.to);
  out.lock = message.lock;
  if (message.epoch !== undefined) out.epoch = u64(message.epoch, 'epoch');
  if (message.value !== undefined) out.value = u64(message.value, 'value');
  if (message.data !== undefined) out.data = message.data;
  if (message.trace !== undefined) out.trace = traceContextToWire(message.trace);
  return out;
}

export function messageFromWire(wire: WireMessage, source: string): Message {
  const message: Mutable<Message> = {
    kind: messageKinds.fromWire(wire.kind, source),
    from: addressFromWire(wire.from, 'from', source),
    to: addressFromWire(wire.to, 'to', source),
    lock: wire.lock,
  };
  if (wire.epoch !== undefined) message.epoch = wire.epoch;
  if (wire.value !== undefined) message.value = wire.value;
  if (wire.data !== undefined) message.data = wire.data;
  const trace = traceContextFromWire(wire.trace);
  if (trace !== undefined) message.trace = trace;
  return message;
}

export function encodeMessage(message: Message): Uint8Array {
  return toBinary(MessageSchema, messageToWire(message));
}

export function decodeMessage(bytes: Uint8Array, source: string): Message {
  return messageFromWire(decodeWire(MessageSchema, bytes, source), source);
}
