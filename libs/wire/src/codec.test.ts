import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { MalformedInputError, type Completion, type LockPacket, type Message, type SpanContextRef, type WorkRequest } from './ports.js';
import { describe, expect, it } from 'vitest';
import { PACKET_WRITER_MATCHES_SCHEMA, batchEpochOf, decodePacketBatchReflective, encodePacketBatchReflective, stampBatchEpoch } from './packet-codec.js';
import {
  completionFromWire,
  completionToWire,
  decodeCompletionBatch,
  decodeMessage,
  decodePacketBatch,
  decodeWorkRequestBatch,
  encodeMessage,
  encodePacketBatch,
  formatTraceparent,
  parseTraceparent,
  splitU128,
  workRequestBatchToWire,
  workRequestFromWire,
  workRequestToWire,
  workRequestTrace,
  completionBatchToWire,
  U128_MAX,
} from './codec.js';
import {
  CompletionBatchSchema,
  CompletionSchema,
  MessageSchema,
  PacketBatchSchema,
  LockPacketSchema,
  WorkRequestBatchSchema,
  WorkRequestSchema,
  Opcode,
  PacketType,
  MessageKind,
} from './index.js';

const trace: SpanContextRef = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
const otherTrace: SpanContextRef = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0 };
const addr = { node: 3, region: 1, rkey: 0xdeadbeef, offset: 4096 };
const big = (1n << 127n) | 0x0123_4567_89ab_cdefn;

/** Port → wire → bytes → wire → port, the way the memory client and server see it. */
function roundTripBatch(requests: readonly WorkRequest[]): { requests: WorkRequest[]; traces: (SpanContextRef | undefined)[] } {
  const wires = requests.map((wr, i) => workRequestToWire(wr, i + 1, i === 1 ? otherTrace : undefined));
  const bytes = toBinary(WorkRequestBatchSchema, workRequestBatchToWire(7, wires, trace));
  const decoded = decodeWorkRequestBatch(bytes, 'test');
  expect(decoded.initiator).toBe(7);
  expect(decoded.requests.map((r) => r.id)).toEqual(requests.map((_, i) => i + 1));
  return { requests: decoded.requests.map((r) => workRequestFromWire(r, 'test')), traces: decoded.requests.map(workRequestTrace) };
}

describe('work requests', () => {
  const every: WorkRequest[] = [
    { addr, op: 'read', length: 64, lock: 12 },
    { addr: { ...addr, offset: 2 ** 40 }, op: 'write', data: new Uint8Array([1, 2, 3]) },
    { addr, op: 'cas', compare: 0n, swap: 0xffff_ffff_ffff_ffffn, lock: 0 },
    { addr, op: 'faa', add: 1n },
    { addr, op: 'masked-cas', width: 16, compare: big, swap: U128_MAX, compareMask: 1n << 64n, swapMask: 0xffn },
    { addr, op: 'masked-faa', width: 8, add: 0x0001_0001_0001_0001n, boundaryMask: 0x8000_8000_8000_8000n },
  ];

  it('round-trip every opcode with every field, including 128-bit values and the lock id', () => {
    const { requests, traces } = roundTripBatch(every);
    expect(requests).toStrictEqual(every);
    expect(traces).toStrictEqual([undefined, otherTrace, undefined, undefined, undefined, undefined]);
  });

  it('keep "no lock" apart from lock 0', () => {
    const { requests } = roundTripBatch([{ addr, op: 'faa', add: 2n }]);
    expect(requests[0]).not.toHaveProperty('lock');
  });

  it('refuse values the wire cannot carry instead of truncating them', () => {
    expect(() => workRequestToWire({ addr, op: 'faa', add: -1n }, 1)).toThrow(RangeError);
    expect(() => workRequestToWire({ addr, op: 'cas', compare: U128_MAX + 1n, swap: 0n }, 1)).toThrow(RangeError);
    expect(() => splitU128(-5n, 'x')).toThrow(/unsigned 128-bit/);
  });

  it('reject an opcode this build does not know, an unspecified one, and a bad atomic width', () => {
    const unknown = create(WorkRequestSchema, { id: 1, opcode: 99 as Opcode });
    expect(() => workRequestFromWire(unknown, 'qp 3')).toThrow(MalformedInputError);
    expect(() => workRequestFromWire(create(WorkRequestSchema, { id: 1 }), 'qp 3')).toThrow(/opcode 0/);
    const width4 = create(WorkRequestSchema, { id: 1, opcode: Opcode.MASKED_CAS, width: 4 });
    expect(() => workRequestFromWire(width4, 'qp 3')).toThrow(/width 4 is not 8 or 16/);
    const farOffset = create(WorkRequestSchema, { id: 1, opcode: Opcode.READ, offset: 1n << 60n });
    expect(() => workRequestFromWire(farOffset, 'qp 3')).toThrow(/beyond 2\^53/);
  });

  it('turn a garbage frame into MalformedInputError naming its source', () => {
    const garbage = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(() => decodeWorkRequestBatch(garbage, 'client 10.0.0.7')).toThrow(MalformedInputError);
    expect(() => decodeWorkRequestBatch(garbage, 'client 10.0.0.7')).toThrow(/from client 10\.0\.0\.7/);
    expect(() => decodeCompletionBatch(new Uint8Array([0x0a, 0x05, 0x01]), 'server')).toThrow(MalformedInputError);
  });
});

describe('completions', () => {
  const cases: Completion[] = [
    { status: 'ok', value: 0n },
    { status: 'ok', value: big },
    { status: 'ok', data: new Uint8Array([9, 8, 7]) },
    { status: 'ok', data: new Uint8Array() },
    { status: 'ok' },
    { status: 'misaligned', detail: 'CAS at offset 4 is not 8-byte aligned' },
    { status: 'unreachable', detail: '' },
  ];

  it('round-trip status, value, data and detail, keeping absent apart from empty', () => {
    const bytes = toBinary(CompletionBatchSchema, completionBatchToWire(cases.map((c, i) => completionToWire(c, i + 1))));
    const decoded = decodeCompletionBatch(bytes, 'test');
    expect(decoded.completions.map((c) => c.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(decoded.completions.map((c) => completionFromWire(c, 'test'))).toStrictEqual(cases);
  });

  it('round-trip every status and reject an unspecified one', () => {
    const statuses = ['ok', 'misaligned', 'out-of-bounds', 'bad-rkey', 'unknown-region', 'unknown-node', 'unsupported', 'bad-request', 'unreachable'] as const;
    for (const status of statuses) expect(completionFromWire(completionToWire({ status }, 1), 't')).toStrictEqual({ status });
    expect(() => completionFromWire(create(CompletionSchema), 'memory node 2')).toThrow(MalformedInputError);
  });
});

describe('lock packets', () => {
  const types = ['acquire', 'release', 'grant', 'reject', 'ack', 'transfer', 'free', 'push-back', 'notify', 'probe'] as const;

  it('round-trip every type and field, with and without agent, dst and trace', () => {
    const packets: LockPacket[] = types.map((type, i) => ({
      type,
      lock: 1_000_000 + i,
      machine: i,
      task: 40 + i,
      mode: i % 2 ? 'shared' : 'exclusive',
      incarnation: 3,
      seq: 0xffff_fff0 + i,
      flags: 0b101,
      ...(i % 3 === 0 ? { agent: 9 } : {}),
      ...(i % 4 === 0 ? { dst: 0 } : {}),
      ...(i % 5 === 0 ? { trace } : {}),
    }));
    const decoded = decodePacketBatch(encodePacketBatch(packets, 5), 'sw.0.in');
    expect(decoded.sender).toBe(5);
    expect(decoded.errors).toEqual([]);
    expect(decoded.packets).toStrictEqual(packets);
  });

  it('are written byte for byte as the schema encodes them, over 500 random batches', () => {
    // The written encoder is in use only while the schema has the fields it knows.
    expect(PACKET_WRITER_MATCHES_SCHEMA).toBe(true);
    let seed = 20;
    const next = (bound: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed % bound;
    };
    // 0 and the uint32 extremes matter: proto3 omits zeros, and large values take five varint bytes.
    const u32 = () => [0, 1, 127, 128, 0xffff_ffff, next(0xffff_ffff)][next(6)]!;
    for (let round = 0; round < 500; round++) {
      const packets: LockPacket[] = Array.from({ length: 1 + next(5) }, () => ({
        type: types[next(types.length)]!,
        lock: u32(),
        machine: u32(),
        task: u32(),
        mode: next(2) ? 'shared' : 'exclusive',
        incarnation: u32(),
        seq: u32(),
        flags: u32(),
        ...(next(2) ? { agent: u32() } : {}),
        ...(next(2) ? { dst: u32() } : {}),
        ...(next(3) === 0 ? { trace } : {}),
      }));
      const sender = u32();
      expect(encodePacketBatch(packets, sender)).toEqual(encodePacketBatchReflective(packets, sender));
      // a stamped batch is the schema's encoding with the epoch set, read back without decoding packets
      const epoch = [1n, 127n, 128n, 0xffff_ffff_ffff_ffffn, BigInt(next(0xffff_ffff)) + 1n][next(5)]!;
      const stamped = stampBatchEpoch(encodePacketBatch(packets, sender), epoch);
      expect(stamped).toEqual(toBinary(PacketBatchSchema, { ...fromBinary(PacketBatchSchema, encodePacketBatchReflective(packets, sender)), epoch }));
      expect(batchEpochOf(stamped)).toBe(epoch);
      expect(batchEpochOf(encodePacketBatch(packets, sender))).toBeUndefined();
      expect(decodePacketBatch(stamped, 'node 1').packets).toStrictEqual(decodePacketBatch(encodePacketBatch(packets, sender), 'node 1').packets);
      // the decode reads the stamp in the same pass (the switch's admission takes it from there)
      expect(decodePacketBatch(stamped, 'node 1').epoch).toBe(epoch);
      expect(decodePacketBatch(encodePacketBatch(packets, sender), 'node 1')).not.toHaveProperty('epoch');
      // read field by field exactly as the reflective reader reads it
      expect(decodePacketBatch(stamped, 'node 1')).toStrictEqual(decodePacketBatchReflective(stamped, 'node 1'));
    }
  });

  it('are read as the reflective reader reads them, or refused, over 2 000 damaged batches', () => {
    let seed = 7;
    const next = (bound: number) => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed % bound;
    };
    const packet = (i: number): LockPacket => ({ type: types[i % types.length]!, lock: 300 + i, machine: 2, task: i, mode: 'shared', incarnation: 1, seq: 128 + i, flags: 5, agent: 2, ...(i % 2 ? { trace } : {}) });
    const valid = stampBatchEpoch(encodePacketBatch([packet(0), packet(1), packet(2)], 9), 300n);
    const outcome = (read: () => unknown) => {
      try {
        return read();
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedInputError);
        return 'refused';
      }
    };
    let refused = 0;
    for (let round = 0; round < 2_000; round++) {
      const bytes = valid.slice(0, valid.length - next(4));
      for (let flips = 1 + next(3); flips > 0; flips--) bytes[next(bytes.length)] = next(256);
      const written = outcome(() => decodePacketBatch(bytes, 'node 1'));
      const reflective = outcome(() => decodePacketBatchReflective(bytes, 'node 1'));
      // stricter, never different: a known field with another wire type is refused here, where the
      // reflective reader keeps it as an unknown field
      if (written === 'refused') refused++;
      else expect(written).toStrictEqual(reflective);
    }
    // both kinds occur: most damaged frames are still read, many not
    expect(refused).toBeGreaterThan(100);
    expect(refused).toBeLessThan(1_900);
  });

  it('read no epoch from an unstamped, zero-stamped or broken frame', () => {
    const batch = encodePacketBatch([{ type: 'grant', lock: 1, machine: 2, task: 3, mode: 'exclusive', incarnation: 0, seq: 4, flags: 0 }], 7);
    expect(batchEpochOf(batch)).toBeUndefined();
    expect(batchEpochOf(stampBatchEpoch(batch, 0n))).toBeUndefined();
    expect(batchEpochOf(new Uint8Array([0x12, 0x7f]))).toBeUndefined();
    expect(batchEpochOf(new Uint8Array())).toBeUndefined();
  });

  it('drop only the bad packet of a batch, and reject garbage or empty batches', () => {
    const good = create(LockPacketSchema, { type: PacketType.GRANT, lock: 1, mode: 2 });
    const newer = create(LockPacketSchema, { type: 77 as PacketType, lock: 2, mode: 2 });
    const noMode = create(LockPacketSchema, { type: PacketType.GRANT, lock: 3 });
    const bytes = toBinary(PacketBatchSchema, create(PacketBatchSchema, { sender: 1, packets: [good, newer, noMode] }));
    const decoded = decodePacketBatch(bytes, 'node 1');
    expect(decoded.packets.map((p) => p.lock)).toEqual([1]);
    expect(decoded.errors.map((e) => e.message)).toEqual([
      'malformed input from node 1: packet type 77 is not one this build knows',
      'malformed input from node 1: lock mode 0 is not one this build knows',
    ]);
    expect(() => decodePacketBatch(new Uint8Array(), 'node 1')).toThrow(/packet batch is empty/);
    expect(() => decodePacketBatch(new Uint8Array([0x12, 0x7f]), 'node 1')).toThrow(MalformedInputError);
  });
});

describe('messages', () => {
  const full: Message = {
    kind: 'grant',
    from: { node: 1, client: 7 },
    to: { node: 2, client: 0 },
    lock: 42,
    epoch: 0n,
    value: 0xffff_ffff_ffff_ffffn,
    data: new Uint8Array([1]),
    trace,
  };

  it('round-trip every field, and every kind with the optional ones absent', () => {
    expect(decodeMessage(encodeMessage(full), 't')).toStrictEqual(full);
    for (const kind of ['handover', 'grant', 'mode-change', 'reset', 'wake', 'timestamp', 'custom'] as const) {
      const bare: Message = { kind, from: full.from, to: full.to, lock: 0 };
      expect(decodeMessage(encodeMessage(bare), 't')).toStrictEqual(bare);
    }
  });

  it('refuse epochs and values outside the unsigned 64-bit range', () => {
    expect(() => encodeMessage({ ...full, epoch: -1n })).toThrow(RangeError);
    expect(() => encodeMessage({ ...full, value: 1n << 64n })).toThrow(RangeError);
  });

  it('reject messages without addresses, with unknown kinds, or that are not messages at all', () => {
    const noFrom = toBinary(MessageSchema, create(MessageSchema, { kind: MessageKind.WAKE, to: { node: 1, client: 1 } }));
    expect(() => decodeMessage(noFrom, 'node 4')).toThrow(/no 'from' address/);
    const newer = toBinary(MessageSchema, create(MessageSchema, { kind: 50 as MessageKind, from: {}, to: {} }));
    expect(() => decodeMessage(newer, 'node 4')).toThrow(MalformedInputError);
    expect(() => decodeMessage(new TextEncoder().encode('{"kind":"grant"}'), 'node 4')).toThrow(MalformedInputError);
  });

  it('ignore an invalid traceparent instead of failing the message', () => {
    const wire = create(MessageSchema, { kind: MessageKind.WAKE, from: {}, to: {}, trace: { traceparent: 'garbage' } });
    expect(decodeMessage(toBinary(MessageSchema, wire), 't')).not.toHaveProperty('trace');
  });
});

describe('traceparent', () => {
  it('formats and parses W3C version 00', () => {
    const header = formatTraceparent(trace);
    expect(header).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(parseTraceparent(header)).toStrictEqual(trace);
    expect(parseTraceparent(formatTraceparent(otherTrace))).toStrictEqual(otherTrace);
  });

  it('accepts a later version with extra fields', () => {
    expect(parseTraceparent('cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds')).toStrictEqual(trace);
  });

  it.each([
    ['empty', ''],
    ['version ff', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ['version 00 with extra fields', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x'],
    ['all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['all-zero span id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['uppercase hex', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
    ['short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['not hex flags', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz'],
  ])('rejects %s', (_name, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('refuses to format an invalid span context', () => {
    expect(() => formatTraceparent({ ...trace, spanId: 'xyz' })).toThrow(RangeError);
    expect(() => formatTraceparent({ ...trace, traceFlags: 256 })).toThrow(RangeError);
  });
});
