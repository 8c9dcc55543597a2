import { create, toBinary } from '@bufbuild/protobuf';
import { LockPacketSchema, PacketBatchSchema, type LockPacket as WireLockPacket } from './gen/lockfabric/v1/packet_pb.js';
import { decodeWire } from './decode.js';
import { lockModes, packetTypes } from './enums.js';
import { MalformedInputError, type LockPacket } from './ports.js';
import { traceContextFromWire, traceContextToWire } from './traceparent.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export function lockPacketToWire(packet: LockPacket): WireLockPacket {
  const out = create(LockPacketSchema);
  out.type = packetTypes.toWire(packet.type);
  out.lock = packet.lock;
  out.machine = packet.machine;
  out.task = packet.task;
  out.mode = lockModes.toWire(packet.mode);
  out.incarnation = packet.incarnation;
  out.seq = packet.seq;
  out.flags = packet.flags;
  if (packet.agent !== undefined) out.agent = packet.agent;
  if (packet.dst !== undefined) out.dst = packet.dst;
  if (packet.trace !== undefined) out.trace = traceContextToWire(packet.trace);
  return out;
}

export function lockPacketFromWire(wire: WireLockPacket, source: string): LockPacket {
  const packet: Mutable<LockPacket> = {
    type: packetTypes.fromWire(wire.type, source),
    lock: wire.lock,
    machine: wire.machine,
    task: wire.task,
    mode: lockModes.fromWire(wire.mode, source),
    incarnation: wire.incarnation,
    seq: wire.seq,
    flags: wire.flags,
  };
  if (wire.agent !== undefined) packet.agent = wire.agent;
  if (wire.dst !== undefined) packet.dst = wire.dst;
  const trace = traceContextFromWire(wire.trace);
  if (trace !== undefined) packet.trace = trace;
  return packet;
}

/** Packets sent on one link in one tick, as one NATS payload. */
export function encodePacketBatch(packets: readonly LockPacket[], sender: number): Uint8Array {
  const batch = create(PacketBatchSchema);
  batch.sender = sender;
  batch.packets = packets.map(lockPacketToWire);
  return toBinary(PacketBatchSchema, batch);
}

export interface DecodedPacketBatch {
  readonly sender: number;
  readonly packets: LockPacket[];
  /** One error per packet that was dropped; the rest of the batch is still delivered. */
  readonly errors: MalformedInputError[];
}

/**
 * Decodes a packet batch. A frame that is not a batch, or an empty one (no sender emits those),
 * throws {@link MalformedInputError}; a single bad packet inside a good frame is reported in
 * `errors` and skipped, so one packet of a newer type does not cost its neighbours.
 */
export function decodePacketBatch(bytes: Uint8Array, source: string): DecodedPacketBatch {
  const batch = decodeWire(PacketBatchSchema, bytes, source);
  if (batch.packets.length === 0) throw new MalformedInputError(source, 'packet batch is empty');
  const packets: LockPacket[] = [];
  const errors: MalformedInputError[] = [];
  for (const wire of batch.packets) {
    try {
      packets.push(lockPacketFromWire(wire, source));
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      errors.push(error);
    }
  }
  return { sender: batch.sender, packets, errors };
}
