import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { describe, expect, it } from 'vitest';
import { CompletionBatchSchema, CompletionSchema, WorkRequestBatchSchema, WorkRequestSchema } from './gen/lockfabric/v1/verbs_pb.js';
import type { CompletionBatch, WorkRequestBatch } from './gen/lockfabric/v1/verbs_pb.js';
import { TraceContextSchema } from './gen/lockfabric/v1/common_pb.js';
import { MalformedInputError } from './ports.js';
import { decodeCompletionBatch, decodeWorkRequestBatch, encodeCompletionBatch, encodeWorkRequestBatch } from './verbs-binary.js';
import { mulberry32 } from '@lockfabric/random';

/** Random batches from a seed (mulberry32), so a failing case can be replayed. */
function randomBatches(seed: number): { requests: WorkRequestBatch; completions: CompletionBatch } {
  const r = mulberry32(seed);
  const u32 = (): number => (r() < 0.3 ? 0 : Math.floor(r() * 2 ** 32));
  const u64 = (): bigint => (r() < 0.3 ? 0n : (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32)));
  const bytes = (): Uint8Array => Uint8Array.from({ length: Math.floor(r() * 20) }, () => Math.floor(r() * 256));
  const trace = () =>
    r() < 0.5 ? undefined : create(TraceContextSchema, { traceparent: r() < 0.8 ? `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01` : '', tracestate: r() < 0.3 ? 'k=v' : '' });
  const requests = create(WorkRequestBatchSchema, {
    initiator: u32(),
    trace: trace(),
    requests: Array.from({ length: Math.floor(r() * 4) }, () =>
      create(WorkRequestSchema, {
        id: u32(),
        opcode: Math.floor(r() * 7),
        node: u32(),
        region: u32(),
        offset: u64(),
        length: u32(),
        rkey: u32(),
        compareLo: u64(),
        compareHi: u64(),
        swapLo: u64(),
        swapHi: u64(),
        addLo: u64(),
        addHi: u64(),
        compareMaskLo: u64(),
        compareMaskHi: u64(),
        swapMaskLo: u64(),
        swapMaskHi: u64(),
        boundaryMaskLo: u64(),
        boundaryMaskHi: u64(),
        width: r() < 0.5 ? 8 : 16,
        data: bytes(),
        lock: r() < 0.5 ? undefined : u32(),
        trace: trace(),
      }),
    ),
  });
  const completions = create(CompletionBatchSchema, {
    completions: Array.from({ length: Math.floor(r() * 4) }, () =>
      create(CompletionSchema, {
        id: u32(),
        status: Math.floor(r() * 10),
        valueLo: r() < 0.5 ? undefined : u64(),
        valueHi: u64(),
        data: r() < 0.5 ? undefined : bytes(),
        detail: r() < 0.5 ? undefined : r() < 0.2 ? '' : 'out of bounds: 4096 > 64',
      }),
    ),
  });
  return { requests, completions };
}

describe('hand-written verb codec against the generated schema', () => {
  it('encodes byte for byte what the schema encodes, and decodes what the schema decodes, over 500 random batches', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const { requests, completions } = randomBatches(seed);
      const requestBytes = toBinary(WorkRequestBatchSchema, requests);
      expect(encodeWorkRequestBatch(requests), `seed ${seed}`).toEqual(requestBytes);
      expect(decodeWorkRequestBatch(requestBytes, 'test'), `seed ${seed}`).toEqual(fromBinary(WorkRequestBatchSchema, requestBytes));
      const completionBytes = toBinary(CompletionBatchSchema, completions);
      expect(encodeCompletionBatch(completions), `seed ${seed}`).toEqual(completionBytes);
      expect(decodeCompletionBatch(completionBytes, 'test'), `seed ${seed}`).toEqual(fromBinary(CompletionBatchSchema, completionBytes));
    }
  });

  it('the one-buffer request encoder (offsets below 2^53, as every lock table has) matches the schema byte for byte', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const { requests } = randomBatches(seed);
      const batch = create(WorkRequestBatchSchema, { ...requests, requests: requests.requests.map((r) => ({ ...r, offset: r.offset % (1n << 53n) })) });
      expect(encodeWorkRequestBatch(batch), `seed ${seed}`).toEqual(toBinary(WorkRequestBatchSchema, batch));
    }
    const edges = create(WorkRequestBatchSchema, {
      initiator: 0xffff_ffff,
      requests: [
        create(WorkRequestSchema, { id: 0xffff_ffff, opcode: 6, offset: (1n << 53n) - 1n, lock: 0, width: 16, boundaryMaskHi: (1n << 64n) - 1n, data: new Uint8Array(200).fill(3), trace: { traceparent: '00-ab-cd-01', tracestate: '' } }),
        create(WorkRequestSchema, {}),
      ],
      trace: { traceparent: '', tracestate: 'vendor=é' },
    });
    expect(encodeWorkRequestBatch(edges)).toEqual(toBinary(WorkRequestBatchSchema, edges));
  });

  it('encodes completion edge values as the schema does: zeros, the uint64 maximum, empty and non-ASCII text', () => {
    const max = (1n << 64n) - 1n;
    const completions = create(CompletionBatchSchema, {
      completions: [
        create(CompletionSchema, { id: 0, status: 0, valueLo: 0n, valueHi: 0n }),
        create(CompletionSchema, { id: 0xffff_ffff, status: 3, valueLo: max, valueHi: max, data: new Uint8Array(0), detail: '' }),
        create(CompletionSchema, { id: 128, status: 1, data: new Uint8Array(300).fill(7), detail: 'fenced: nœud 3 — époque 7' }),
        create(CompletionSchema, { id: 1, valueHi: 1n }),
      ],
    });
    expect(encodeCompletionBatch(completions)).toEqual(toBinary(CompletionBatchSchema, completions));
    expect(encodeCompletionBatch(create(CompletionBatchSchema, {}))).toEqual(new Uint8Array(0));
  });

  it('skips fields it does not know, as the schema does', () => {
    const w = new BinaryWriter();
    w.tag(1, WireType.Varint).uint32(7);
    w.tag(99, WireType.LengthDelimited).bytes(new Uint8Array([1, 2, 3]));
    w.tag(98, WireType.Bit32).fixed32(5);
    expect(decodeWorkRequestBatch(w.finish(), 'test').initiator).toBe(7);
  });

  it('turns truncated frames, bad tags, wrong wire types and sub-messages longer than the frame into MalformedInputError naming the source', () => {
    const good = encodeWorkRequestBatch(randomBatches(3).requests);
    const wrongType = new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(new Uint8Array([1])).finish();
    const nestedWrongType = new BinaryWriter().tag(2, WireType.LengthDelimited).bytes(new BinaryWriter().tag(8, WireType.Varint).uint32(1).finish()).finish();
    const overlongSub = new Uint8Array([0x12, 0x7f, 0x08, 0x01]);
    const cases = [good.subarray(0, good.length - 1), new Uint8Array([0x07]), new Uint8Array([0x00]), wrongType, nestedWrongType, overlongSub, new Uint8Array([0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])];
    for (const bytes of cases) {
      expect(() => decodeWorkRequestBatch(bytes, 'grpc test'), `bytes ${Array.from(bytes).join(',')}`).toThrow(MalformedInputError);
      expect(() => decodeWorkRequestBatch(bytes, 'grpc test')).toThrow(/grpc test/);
    }
    expect(() => decodeCompletionBatch(new Uint8Array([0x0a, 0x05, 0x08]), 'grpc test')).toThrow(MalformedInputError);
  });

  it('never accepts random garbage as something the schema would read differently', () => {
    const r = mulberry32(42);
    let accepted = 0;
    for (let i = 0; i < 2000; i++) {
      const bytes = Uint8Array.from({ length: 1 + Math.floor(r() * 24) }, () => Math.floor(r() * 256));
      let ours: WorkRequestBatch | undefined;
      try {
        ours = decodeWorkRequestBatch(bytes, 'fuzz');
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedInputError);
        continue;
      }
      accepted++;
      const { $unknown: _unknown, ...theirs } = fromBinary(WorkRequestBatchSchema, bytes);
      expect(ours, `bytes ${Array.from(bytes).join(',')}`).toEqual(theirs);
    }
    expect(accepted).toBeGreaterThan(0);
  });
});
