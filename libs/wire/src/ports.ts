// The port types the codec maps to and from, imported in this one place.
export type {
  ClientAddress,
  Completion,
  LockMode,
  LockPacket,
  Message,
  MessageKind,
  PacketType,
  SpanContextRef,
  VerbOpcode,
  VerbStatus,
  WorkRequest,
} from '@lockfabric/ports';
export { MalformedInputError } from '@lockfabric/ports';
