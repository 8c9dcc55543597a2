import { LockMode as WireLockMode } from './gen/lockfabric/v1/common_pb.js';
import { MessageKind as WireMessageKind } from './gen/lockfabric/v1/message_pb.js';
import { PacketType as WirePacketType } from './gen/lockfabric/v1/packet_pb.js';
import { Opcode, VerbStatus as WireVerbStatus } from './gen/lockfabric/v1/verbs_pb.js';
import { MalformedInputError, type LockMode, type MessageKind, type PacketType, type VerbOpcode, type VerbStatus } from './ports.js';

/**
 * A two-way map between a port string union and a protobuf enum. `UNSPECIFIED` (0) and numbers a
 * newer sender may use have no port value, so decoding them is malformed input.
 */
export class EnumMapping<P extends string, W extends number> {
  private readonly toWireMap: ReadonlyMap<P, W>;
  private readonly fromWireMap: ReadonlyMap<number, P>;

  constructor(
    private readonly what: string,
    pairs: readonly (readonly [P, W])[],
  ) {
    this.toWireMap = new Map(pairs);
    this.fromWireMap = new Map(pairs.map(([port, wire]) => [wire, port]));
  }

  toWire(value: P): W {
    const wire = this.toWireMap.get(value);
    if (wire === undefined) throw new RangeError(`unknown ${this.what} '${value}'`);
    return wire;
  }

  fromWire(value: number, source: string): P {
    const port = this.fromWireMap.get(value);
    if (port === undefined) throw new MalformedInputError(source, `${this.what} ${value} is not one this build knows`);
    return port;
  }

  /** Every port value, in declaration order. */
  values(): P[] {
    return [...this.toWireMap.keys()];
  }
}

export const opcodes = new EnumMapping<VerbOpcode, Opcode>('opcode', [
  ['read', Opcode.READ],
  ['write', Opcode.WRITE],
  ['cas', Opcode.CAS],
  ['faa', Opcode.FAA],
  ['masked-cas', Opcode.MASKED_CAS],
  ['masked-faa', Opcode.MASKED_FAA],
]);

export const verbStatuses = new EnumMapping<VerbStatus, WireVerbStatus>('verb status', [
  ['ok', WireVerbStatus.OK],
  ['misaligned', WireVerbStatus.MISALIGNED],
  ['out-of-bounds', WireVerbStatus.OUT_OF_BOUNDS],
  ['bad-rkey', WireVerbStatus.BAD_RKEY],
  ['unknown-region', WireVerbStatus.UNKNOWN_REGION],
  ['unknown-node', WireVerbStatus.UNKNOWN_NODE],
  ['unsupported', WireVerbStatus.UNSUPPORTED],
  ['bad-request', WireVerbStatus.BAD_REQUEST],
  ['unreachable', WireVerbStatus.UNREACHABLE],
]);

export const lockModes = new EnumMapping<LockMode, WireLockMode>('lock mode', [
  ['shared', WireLockMode.SHARED],
  ['exclusive', WireLockMode.EXCLUSIVE],
]);

export const packetTypes = new EnumMapping<PacketType, WirePacketType>('packet type', [
  ['acquire', WirePacketType.ACQUIRE],
  ['release', WirePacketType.RELEASE],
  ['grant', WirePacketType.GRANT],
  ['reject', WirePacketType.REJECT],
  ['ack', WirePacketType.ACK],
  ['transfer', WirePacketType.TRANSFER],
  ['free', WirePacketType.FREE],
  ['push-back', WirePacketType.PUSH_BACK],
  ['notify', WirePacketType.NOTIFY],
  ['probe', WirePacketType.PROBE],
]);

export const messageKinds = new EnumMapping<MessageKind, WireMessageKind>('message kind', [
  ['handover', WireMessageKind.HANDOVER],
  ['grant', WireMessageKind.GRANT],
  ['mode-change', WireMessageKind.MODE_CHANGE],
  ['reset', WireMessageKind.RESET],
  ['wake', WireMessageKind.WAKE],
  ['timestamp', WireMessageKind.TIMESTAMP],
  ['custom', WireMessageKind.CUSTOM],
]);
