import { fc, fuzzRuns, mutated, untrustedBytes } from '@lockfabric/testkit';
import { describe, expect, it } from 'vitest';
import type { Completion, VerbStatus, WorkRequest } from './ports.js';
import { decodeDoorbell, encodeCompletions, type Doorbell } from './doorbell.js';
import type { TraceContext } from './gen/lockfabric/v1/common_pb.js';
import { traceContextFromWire } from './traceparent.js';
import { verbStatuses } from './enums.js';
import { completionBatchToWire, completionToWire, decodeWorkRequestBatch, encodeCompletionBatch, encodeWorkRequestBatch, workRequestBatchToWire, workRequestFromWire, workRequestToWire, workRequestTrace } from './verbs-codec.js';

const SOURCE = 'doorbell test';
const U128_MAX = (1n << 128n) - 1n;

/**
 * What the memory node made of a frame before: the generated shapes, then each request and the
 * trace contexts (per-request ones listed when any request carries a context message).
 */
function general(frame: Uint8Array): Doorbell {
  const batch = decodeWorkRequestBatch(frame, SOURCE);
  const trace = traceContextFromWire(batch.trace);
  return {
    initiator: batch.initiator,
    requests: batch.requests.map((r) => workRequestFromWire(r, SOURCE)),
    ids: batch.requests.map((r) => r.id),
    ...(trace !== undefined ? { trace } : {}),
    ...(batch.requests.some((r) => r.trace !== undefined) ? { requestTraces: batch.requests.map(workRequestTrace) } : {}),
  };
}

const u32 = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 127 }), fc.integer({ min: 0, max: 0xffff_ffff }));
const wide = (bits: number) => fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: (1n << 32n) - 1n }), fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n }));
const addr = fc.record({ node: u32, region: u32, rkey: u32, offset: fc.oneof(fc.integer({ min: 0, max: 1 << 20 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })) });
const lock = fc.option(u32, { nil: undefined });

/** Port work requests of every opcode, as a compute node posts them. */
const workRequest: fc.Arbitrary<WorkRequest> = fc.oneof(
  fc.record({ op: fc.constant('read' as const), addr, length: u32, lock }),
  fc.record({ op: fc.constant('write' as const), addr, data: fc.uint8Array({ maxLength: 24 }), lock }),
  fc.record({ op: fc.constant('cas' as const), addr, compare: wide(128), swap: wide(128), lock }),
  fc.record({ op: fc.constant('faa' as const), addr, add: wide(128), lock }),
  fc.record({ op: fc.constant('masked-cas' as const), addr, width: fc.constantFrom(8 as const, 16 as const), compare: wide(128), swap: wide(128), compareMask: wide(128), swapMask: wide(128), lock }),
  fc.record({ op: fc.constant('masked-faa' as const), addr, width: fc.constantFrom(8 as const, 16 as const), add: wide(128), boundaryMask: wide(128), lock }),
).map((wr) => {
  const out = { ...wr } as { lock?: number };
  if (out.lock === undefined) delete out.lock;
  return out as WorkRequest;
});

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((b) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(''));
/** Trace contexts as senders write them (a span's traceparent), and odd ones (any ASCII text). */
const traceContext: fc.Arbitrary<TraceContext | undefined> = fc.option(
  fc.oneof(
    fc.tuple(hex(16), hex(8), fc.constantFrom('00', '01')).map(([t, sp, f]) => `00-${t}-${sp}-${f}`),
    fc.string({ maxLength: 60 }),
  ).chain((traceparent) => fc.record({ $typeName: fc.constant('lockfabric.v1.TraceContext' as const), traceparent: fc.constant(traceparent), tracestate: fc.oneof(fc.constant(''), fc.string({ maxLength: 12 })) })),
  { nil: undefined, freq: 3 },
);

/** Frames a compute node sends (trace contexts now and then, on the batch and on a request). */
const doorbellFrame = fc.tuple(u32, fc.array(fc.tuple(workRequest, u32, traceContext), { maxLength: 40 }), traceContext).map(([initiator, requests, trace]) => {
  const batch = workRequestBatchToWire(
    initiator,
    requests.map(([wr, id, requestTrace]) => ({ ...workRequestToWire(wr, id), ...(requestTrace ? { trace: requestTrace } : {}) })),
    undefined,
  );
  return encodeWorkRequestBatch(trace ? { ...batch, trace } : batch);
});

describe('decodeDoorbell: a frame straight into port work requests', () => {
  it('reads what the general codec reads, from every frame a compute node sends', () => {
    fc.assert(
      fc.property(doorbellFrame, (frame) => {
        const fast = decodeDoorbell(frame);
        expect(fast).toEqual(general(frame));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('on mutated and random bytes, takes only frames the general codec reads the same way, with no error anywhere', () => {
    let taken = 0;
    fc.assert(
      fc.property(untrustedBytes(doorbellFrame), (frame) => {
        const fast = decodeDoorbell(frame);
        if (fast === undefined) return;
        taken++;
        expect(fast).toEqual(general(frame)); // `general` throws on any frame- or request-level error
      }),
      { numRuns: fuzzRuns(1000) },
    );
    expect(taken).toBeGreaterThan(0);
  });

  it('reads trace contexts as the general codec does; leaves non-ASCII ones, unknown fields and opcodes, bad widths, offsets beyond 2^53 and truncation to it', () => {
    const cas = (offset: number): WorkRequest => ({ op: 'cas', addr: { node: 0, region: 0, rkey: 7, offset }, compare: 0n, swap: 1n });
    const frame = (requests: WorkRequest[], trace?: { traceId: string; spanId: string; traceFlags: number }, requestTrace?: typeof trace) =>
      encodeWorkRequestBatch(workRequestBatchToWire(1, requests.map((wr, i) => workRequestToWire(wr, i + 1, i === 0 ? requestTrace : undefined)), trace));
    const span = { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: 1 };
    const plain = frame([cas(8)]);
    expect(decodeDoorbell(plain)).toBeDefined();
    expect(decodeDoorbell(frame([cas(8)], span))).toEqual({ ...general(plain), trace: span });
    expect(decodeDoorbell(frame([cas(8), cas(16)], undefined, span))).toEqual({ ...general(frame([cas(8), cas(16)])), requestTraces: [span, undefined] });
    const accented = encodeWorkRequestBatch({ ...workRequestBatchToWire(1, [workRequestToWire(cas(8), 1)], span), trace: { $typeName: 'lockfabric.v1.TraceContext', traceparent: 'é', tracestate: '' } });
    expect(decodeDoorbell(accented)).toBeUndefined();
    expect(general(accented)).toEqual({ ...general(plain), ids: [1] });
    expect(decodeDoorbell(frame([cas(Number.MAX_SAFE_INTEGER - 7)]))).toEqual(general(frame([cas(Number.MAX_SAFE_INTEGER - 7)])));
    expect(decodeDoorbell(Uint8Array.from([...plain, 0xf8, 0x01, 0x00]))).toBeUndefined(); // field 31, unknown
    expect(decodeDoorbell(plain.subarray(0, plain.length - 1))).toBeUndefined();
    const unknownOpcode = Uint8Array.from(plain);
    unknownOpcode[unknownOpcode.indexOf(0x10) + 1] = 9; // field 2 (opcode) of the request
    expect(decodeDoorbell(unknownOpcode)).toBeUndefined();
    const badWidth = encodeWorkRequestBatch(workRequestBatchToWire(1, [{ ...workRequestToWire({ op: 'masked-faa', addr: cas(8).addr, width: 8, add: 1n, boundaryMask: 0n }, 1), width: 12 }], undefined));
    expect(decodeDoorbell(badWidth)).toBeUndefined();
    expect(() => general(badWidth)).toThrow(/width 12/);
    for (const offset of [2n ** 53n, 2n ** 60n]) {
      const huge = encodeWorkRequestBatch(workRequestBatchToWire(1, [{ ...workRequestToWire(cas(8), 1), offset }], undefined));
      expect(decodeDoorbell(huge)).toBeUndefined();
      expect(() => general(huge)).toThrow(/beyond 2\^53/);
    }
  });
});

const status = fc.constantFrom(...verbStatuses.values());
const completion: fc.Arbitrary<Completion> = fc
  .record({ status, value: fc.option(wide(128), { nil: undefined }), data: fc.option(fc.uint8Array({ maxLength: 40 }), { nil: undefined }), detail: fc.option(fc.string({ unit: 'grapheme', maxLength: 30 }), { nil: undefined }) })
  .map((c) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) as unknown as Completion);

/** The general encoding of an answer: a generated Completion per request, then the batch. */
const generalEncode = (completions: readonly Completion[], ids: readonly number[]) => encodeCompletionBatch(completionBatchToWire(completions.map((c, i) => completionToWire(c, ids[i]!))));

describe('encodeCompletions: port completions straight into a CompletionBatch', () => {
  it('writes byte for byte what completionToWire and encodeCompletionBatch write', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(completion, u32), { maxLength: 40 }), (pairs) => {
        const completions = pairs.map(([c]) => c);
        const ids = pairs.map(([, id]) => id);
        expect(encodeCompletions(completions, ids)).toEqual(generalEncode(completions, ids));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('leaves completions the general encoder refuses (it throws) or patches to it', () => {
    const refused: Completion[] = [
      { status: 'no-such-status' as VerbStatus },
      { status: 'ok', value: -1n },
      { status: 'ok', value: U128_MAX + 1n },
    ];
    for (const c of refused) {
      expect(encodeCompletions([c], [1])).toBeUndefined();
      expect(() => generalEncode([c], [1])).toThrow(RangeError);
    }
    expect(encodeCompletions([{ status: 'ok', value: U128_MAX }], [1])).toEqual(generalEncode([{ status: 'ok', value: U128_MAX }], [1]));
    expect(encodeCompletions([undefined as unknown as Completion], [1])).toBeUndefined();
    expect(encodeCompletions([{ status: 'ok' }], [1, 2])).toBeUndefined();
  });
});

describe('the differential property catches a decoder that reads differently (mutant)', () => {
  it('a fast decoder that drops the lock id fails it', () => {
    const mutant = (frame: Uint8Array) => {
      const out = decodeDoorbell(frame);
      out?.requests.forEach((r) => delete (r as { lock?: number }).lock);
      return out;
    };
    expect(() =>
      fc.assert(
        fc.property(mutated(doorbellFrame), (frame) => {
          const fast = mutant(frame);
          if (fast !== undefined) expect(fast).toEqual(general(frame));
        }),
        { numRuns: 300 },
      ),
    ).toThrow();
  });
});
