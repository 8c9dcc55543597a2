import { create, toBinary } from '@bufbuild/protobuf';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { LockPacketSchema, PacketBatchSchema, type LockPacket as WireLockPacket } from './gen/lockfabric/v1/packet_pb.js';
import { decodeWire } from './decode.js';
import { lockModes, packetTypes } from './enums.js';
import { MalformedInputError, type LockPacket } from './ports.js';
import { traceContextFromWire, traceContextToWire } from './traceparent.js';
import { FrameReader, guard, readTrace } from './verbs-binary.js';

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

/**
 * Packets sent on one link in one tick, as one NATS payload. Written field by field rather than
 * through protobuf-es's reflective encoder, which built a message object per packet and was the
 * largest share of a live FissLock compute node's own processor time per acquire. The bytes are
 * the schema's (fields in number order, proto3 defaults omitted; codec.test.ts compares them over
 * random batches). Should packet.proto gain or renumber a field, the schema check below sends
 * every batch the reflective way until this writer is updated (codec.test.ts fails meanwhile).
 */
export function encodePacketBatch(packets: readonly LockPacket[], sender: number): Uint8Array {
  if (!PACKET_WRITER_MATCHES_SCHEMA) return encodePacketBatchReflective(packets, sender);
  const w = new BinaryWriter();
  if (sender !== 0) w.tag(1, WireType.Varint).uint32(sender);
  for (const packet of packets) {
    w.tag(2, WireType.LengthDelimited).fork();
    writeLockPacket(w, packet);
    w.join();
  }
  return w.finish();
}

/** The reflective encoding of a batch: the reference the written one is held to. */
export function encodePacketBatchReflective(packets: readonly LockPacket[], sender: number): Uint8Array {
  const batch = create(PacketBatchSchema);
  batch.sender = sender;
  batch.packets = packets.map(lockPacketToWire);
  return toBinary(PacketBatchSchema, batch);
}

/** Field numbers `writeLockPacket` and `encodePacketBatch` write, in order (the batch epoch: `stampBatchEpoch`). */
const WRITTEN_PACKET_FIELDS = '1,2,3,4,5,6,7,8,9,10,11';
const WRITTEN_BATCH_FIELDS = '1,2,3';
/** True while the schema has exactly the fields the writer knows. */
export const PACKET_WRITER_MATCHES_SCHEMA =
  LockPacketSchema.fields.map((f) => f.number).join(',') === WRITTEN_PACKET_FIELDS && PacketBatchSchema.fields.map((f) => f.number).join(',') === WRITTEN_BATCH_FIELDS;

/**
 * `batch` (an encoded PacketBatch without an epoch) stamped with `epoch`: the epoch field appended,
 * which is where the schema's field order puts it, so the bytes equal an encoding of the batch
 * with its epoch set. Costs the sender a copy of the batch instead of a NATS header.
 */
export function stampBatchEpoch(batch: Uint8Array, epoch: bigint): Uint8Array {
  const field = new BinaryWriter().tag(3, WireType.Varint).uint64(epoch).finish();
  const out = new Uint8Array(batch.length + field.length);
  out.set(batch, 0);
  out.set(field, batch.length);
  return out;
}

/**
 * The epoch a batch is stamped with, read by skipping over its fields without decoding a packet;
 * undefined when it has none (or 0) or the frame is not well formed (the decoder reports those).
 */
export function batchEpochOf(bytes: Uint8Array): bigint | undefined {
  try {
    const reader = new BinaryReader(bytes);
    let epoch = 0n;
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 3 && wireType === WireType.Varint) epoch = BigInt(reader.uint64());
      else reader.skip(wireType, field);
    }
    return epoch > 0n ? epoch : undefined;
  } catch {
    return undefined;
  }
}

function writeLockPacket(w: BinaryWriter, packet: LockPacket): void {
  const type = packetTypes.toWire(packet.type);
  if (type !== 0) w.tag(1, WireType.Varint).int32(type);
  if (packet.lock !== 0) w.tag(2, WireType.Varint).uint32(packet.lock);
  if (packet.machine !== 0) w.tag(3, WireType.Varint).uint32(packet.machine);
  if (packet.task !== 0) w.tag(4, WireType.Varint).uint32(packet.task);
  const mode = lockModes.toWire(packet.mode);
  if (mode !== 0) w.tag(5, WireType.Varint).int32(mode);
  if (packet.incarnation !== 0) w.tag(6, WireType.Varint).uint32(packet.incarnation);
  if (packet.seq !== 0) w.tag(7, WireType.Varint).uint32(packet.seq);
  if (packet.flags !== 0) w.tag(8, WireType.Varint).uint32(packet.flags);
  // optional fields: present means written, 0 included
  if (packet.agent !== undefined) w.tag(9, WireType.Varint).uint32(packet.agent);
  if (packet.dst !== undefined) w.tag(10, WireType.Varint).uint32(packet.dst);
  const trace = traceContextToWire(packet.trace);
  if (trace !== undefined) {
    w.tag(11, WireType.LengthDelimited).fork();
    if (trace.traceparent !== '') w.tag(1, WireType.LengthDelimited).string(trace.traceparent);
    if (trace.tracestate !== '') w.tag(2, WireType.LengthDelimited).string(trace.tracestate);
    w.join();
  }
}

export interface DecodedPacketBatch {
  readonly sender: number;
  readonly packets: LockPacket[];
  /** One error per packet that was dropped; the rest of the batch is still delivered. */
  readonly errors: MalformedInputError[];
  /** The membership epoch the batch is stamped with (`stampBatchEpoch`); absent when none or 0. */
  readonly epoch?: bigint;
}

/**
 * Decodes a packet batch. A frame that is not a batch, or an empty one (no sender emits those),
 * throws {@link MalformedInputError}; a single bad packet inside a good frame is reported in
 * `errors` and skipped, so one packet of a newer type does not cost its neighbours. Read field by
 * field (FrameReader) rather than through protobuf-es's reflective reader, which cost a switch
 * lock two reflective decodes per exchange (the switch's ingress and the grant's way back);
 * codec.test.ts holds it to the reflective decode over random batches.
 */
export function decodePacketBatch(bytes: Uint8Array, source: string): DecodedPacketBatch {
  const f = new FrameReader(bytes, source, 'lockfabric.v1.PacketBatch');
  let sender = 0;
  let epoch = 0n;
  const wires: WireLockPacket[] = [];
  guard(f, () =>
    f.fields(f.len, (no, wt) => {
      if (no === 1) {
        f.expect(no, wt, WireType.Varint);
        sender = f.uint32();
      } else if (no === 2) {
        f.expect(no, wt, WireType.LengthDelimited);
        wires.push(readLockPacket(f));
      } else if (no === 3) {
        // read here, in the one pass, so the switch's admission needs no second parse of the frame
        f.expect(no, wt, WireType.Varint);
        epoch = f.uint64();
      } else return false; // unknown fields are skipped
      return true;
    }),
  );
  return packetsOf(sender, wires, source, epoch);
}

/** The reflective decode of a batch: the reference the field-by-field one is held to. */
export function decodePacketBatchReflective(bytes: Uint8Array, source: string): DecodedPacketBatch {
  const batch = decodeWire(PacketBatchSchema, bytes, source);
  return packetsOf(batch.sender, batch.packets, source, batch.epoch);
}

function packetsOf(sender: number, wires: readonly WireLockPacket[], source: string, epoch: bigint): DecodedPacketBatch {
  if (wires.length === 0) throw new MalformedInputError(source, 'packet batch is empty');
  const packets: LockPacket[] = [];
  const errors: MalformedInputError[] = [];
  for (const wire of wires) {
    try {
      packets.push(lockPacketFromWire(wire, source));
    } catch (error) {
      if (!(error instanceof MalformedInputError)) throw error;
      errors.push(error);
    }
  }
  return epoch > 0n ? { sender, packets, errors, epoch } : { sender, packets, errors };
}

function readLockPacket(f: FrameReader): WireLockPacket {
  const p: Mutable<WireLockPacket> = { $typeName: 'lockfabric.v1.LockPacket', type: 0, lock: 0, machine: 0, task: 0, mode: 0, incarnation: 0, seq: 0, flags: 0 };
  const end = f.begin();
  f.fields(end, (no, wt) => {
    if (no === 11) {
      f.expect(no, wt, WireType.LengthDelimited);
      p.trace = readTrace(f, p.trace);
      // the reader decodes bad UTF-8 to U+FFFD where the reflective one refuses the frame: so do we
      if (p.trace.traceparent.includes('\uFFFD') || p.trace.tracestate.includes('\uFFFD')) f.fail('a trace context that is not valid UTF-8');
      return true;
    }
    if (no < 1 || no > 10) return false;
    f.expect(no, wt, WireType.Varint);
    // type and mode are enums (int32); the rest uint32
    if (no === 1) p.type = f.int32();
    else if (no === 5) p.mode = f.int32();
    else {
      const value = f.uint32();
      if (no === 2) p.lock = value;
      else if (no === 3) p.machine = value;
      else if (no === 4) p.task = value;
      else if (no === 6) p.incarnation = value;
      else if (no === 7) p.seq = value;
      else if (no === 8) p.flags = value;
      else if (no === 9) p.agent = value;
      else p.dst = value;
    }
    return true;
  });
  return p;
}
