import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { TraceContext } from './gen/lockfabric/v1/common_pb.js';
import type { Completion, CompletionBatch, WorkRequest, WorkRequestBatch } from './gen/lockfabric/v1/verbs_pb.js';
import { MalformedInputError } from './ports.js';
import { errorMessage } from '@lockfabric/ports';
import { varintSize, writeVarint } from './varint.js';

/**
 * Hand-written protobuf codec for the two messages on the verb hot path (WorkRequestBatch and
 * CompletionBatch, verbs.proto). The reflective codec of protobuf-es costs tens of microseconds
 * per verb pair, a large share of a live verb's round trip. Output is byte-identical to the
 * generated schema's (fields in number order, proto3 defaults omitted) and decoding yields the same
 * message shapes; tests hold both properties against the schema. A field arriving with the wrong
 * wire type is malformed input here (the reflective reader would reinterpret it).
 */

// ---- encode ----

function writeTrace(w: BinaryWriter, fieldNo: number, trace: TraceContext | undefined): void {
  if (trace === undefined) return;
  w.tag(fieldNo, WireType.LengthDelimited).fork();
  if (trace.traceparent !== '') w.tag(1, WireType.LengthDelimited).string(trace.traceparent);
  if (trace.tracestate !== '') w.tag(2, WireType.LengthDelimited).string(trace.tracestate);
  w.join();
}

function writeU32(w: BinaryWriter, fieldNo: number, value: number): void {
  if (value !== 0) w.tag(fieldNo, WireType.Varint).uint32(value);
}

function writeFixed64(w: BinaryWriter, fieldNo: number, value: bigint): void {
  if (value !== 0n) w.tag(fieldNo, WireType.Bit64).fixed64(value);
}

function writeWorkRequest(w: BinaryWriter, r: WorkRequest): void {
  writeU32(w, 1, r.id);
  if (r.opcode !== 0) w.tag(2, WireType.Varint).int32(r.opcode);
  writeU32(w, 3, r.node);
  writeU32(w, 4, r.region);
  if (r.offset !== 0n) w.tag(5, WireType.Varint).uint64(r.offset);
  writeU32(w, 6, r.length);
  writeU32(w, 7, r.rkey);
  writeFixed64(w, 8, r.compareLo);
  writeFixed64(w, 9, r.compareHi);
  writeFixed64(w, 10, r.swapLo);
  writeFixed64(w, 11, r.swapHi);
  writeFixed64(w, 12, r.addLo);
  writeFixed64(w, 13, r.addHi);
  writeFixed64(w, 14, r.compareMaskLo);
  writeFixed64(w, 15, r.compareMaskHi);
  writeFixed64(w, 16, r.swapMaskLo);
  writeFixed64(w, 17, r.swapMaskHi);
  writeFixed64(w, 18, r.boundaryMaskLo);
  writeFixed64(w, 19, r.boundaryMaskHi);
  writeU32(w, 20, r.width);
  if (r.data.length > 0) w.tag(21, WireType.LengthDelimited).bytes(r.data);
  if (r.lock !== undefined) w.tag(22, WireType.Varint).uint32(r.lock);
  writeTrace(w, 23, r.trace);
}

/**
 * The compute node encodes one of these per doorbell: sized first, then written into one buffer, as
 * encodeCompletionBatch does and for the same reason (BinaryWriter allocates per fixed64 value).
 * Values the wire cannot carry, or that BinaryWriter would refuse, go through it instead.
 */
export function encodeWorkRequestBatch(batch: WorkRequestBatch): Uint8Array {
  const requests = batch.requests;
  if (!fitsU32(batch.initiator)) return encodeWorkRequestBatchWithWriter(batch);
  const sizes = new Array<number>(requests.length);
  const traces = new Array<EncodedTrace | undefined>(requests.length);
  let total = batch.initiator !== 0 ? 1 + varintSize(batch.initiator) : 0;
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    if (!fastRequest(r)) return encodeWorkRequestBatchWithWriter(batch);
    let size = 0;
    if (r.id !== 0) size += 1 + varintSize(r.id);
    if (r.opcode !== 0) size += 1 + varintSize(r.opcode);
    if (r.node !== 0) size += 1 + varintSize(r.node);
    if (r.region !== 0) size += 1 + varintSize(r.region);
    if (r.offset !== 0n) size += 1 + varintSize(Number(r.offset));
    if (r.length !== 0) size += 1 + varintSize(r.length);
    if (r.rkey !== 0) size += 1 + varintSize(r.rkey);
    // fields 8–15 have a one-byte tag, 16–19 a two-byte one
    for (let k = 0; k < 12; k++) if (fixed64Of(r, k) !== 0n) size += (k < 8 ? 1 : 2) + 8;
    if (r.width !== 0) size += 2 + varintSize(r.width);
    if (r.data.length > 0) size += 2 + varintSize(r.data.length) + r.data.length;
    if (r.lock !== undefined) size += 2 + varintSize(r.lock);
    const trace = encodedTrace(r.trace);
    traces[i] = trace;
    if (trace !== undefined) size += 2 + varintSize(trace.size) + trace.size;
    sizes[i] = size;
    total += 1 + varintSize(size) + size;
  }
  const batchTrace = encodedTrace(batch.trace);
  if (batchTrace !== undefined) total += 1 + varintSize(batchTrace.size) + batchTrace.size;

  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  if (batch.initiator !== 0) {
    out[at++] = (1 << 3) | WireType.Varint;
    at = writeVarint(out, at, batch.initiator);
  }
  const varintField = (tag: number, value: number) => {
    at = writeVarint(out, at, tag);
    at = writeVarint(out, at, value);
  };
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    out[at++] = (2 << 3) | WireType.LengthDelimited;
    at = writeVarint(out, at, sizes[i]!);
    if (r.id !== 0) varintField((1 << 3) | WireType.Varint, r.id);
    if (r.opcode !== 0) varintField((2 << 3) | WireType.Varint, r.opcode);
    if (r.node !== 0) varintField((3 << 3) | WireType.Varint, r.node);
    if (r.region !== 0) varintField((4 << 3) | WireType.Varint, r.region);
    if (r.offset !== 0n) varintField((5 << 3) | WireType.Varint, Number(r.offset));
    if (r.length !== 0) varintField((6 << 3) | WireType.Varint, r.length);
    if (r.rkey !== 0) varintField((7 << 3) | WireType.Varint, r.rkey);
    for (let k = 0; k < 12; k++) {
      const value = fixed64Of(r, k);
      if (value === 0n) continue;
      at = writeVarint(out, at, ((8 + k) << 3) | WireType.Bit64);
      view.setBigUint64(at, value, true);
      at += 8;
    }
    if (r.width !== 0) varintField((20 << 3) | WireType.Varint, r.width);
    if (r.data.length > 0) {
      varintField((21 << 3) | WireType.LengthDelimited, r.data.length);
      out.set(r.data, at);
      at += r.data.length;
    }
    if (r.lock !== undefined) varintField((22 << 3) | WireType.Varint, r.lock);
    const trace = traces[i];
    if (trace !== undefined) at = writeEncodedTrace(out, at, 23, trace);
  }
  if (batchTrace !== undefined) at = writeEncodedTrace(out, at, 3, batchTrace);
  return out;
}

/** The BinaryWriter form of encodeWorkRequestBatch: the reference for values outside its fast path. */
export function encodeWorkRequestBatchWithWriter(batch: WorkRequestBatch): Uint8Array {
  const w = new BinaryWriter();
  writeU32(w, 1, batch.initiator);
  for (const request of batch.requests) {
    w.tag(2, WireType.LengthDelimited).fork();
    writeWorkRequest(w, request);
    w.join();
  }
  writeTrace(w, 3, batch.trace);
  return w.finish();
}

/** Fields 8–19 (compare, swap, add, masks; lo then hi) in field-number order. */
function fixed64Of(r: WorkRequest, k: number): bigint {
  switch (k) {
    case 0: return r.compareLo;
    case 1: return r.compareHi;
    case 2: return r.swapLo;
    case 3: return r.swapHi;
    case 4: return r.addLo;
    case 5: return r.addHi;
    case 6: return r.compareMaskLo;
    case 7: return r.compareMaskHi;
    case 8: return r.swapMaskLo;
    case 9: return r.swapMaskHi;
    case 10: return r.boundaryMaskLo;
    default: return r.boundaryMaskHi;
  }
}

const fitsU32 = (value: number) => Number.isInteger(value) && value >= 0 && value <= 0xffff_ffff;
const U53_LIMIT = 1n << 53n;

/** Whether the fast encoder writes `r` exactly as BinaryWriter would (else the writer decides). */
function fastRequest(r: WorkRequest): boolean {
  if (!fitsU32(r.id) || !fitsU32(r.node) || !fitsU32(r.region) || !fitsU32(r.length) || !fitsU32(r.rkey) || !fitsU32(r.width)) return false;
  if (!Number.isInteger(r.opcode) || r.opcode < 0 || r.opcode > 0x7fff_ffff) return false;
  if (r.offset < 0n || r.offset >= U53_LIMIT) return false;
  if (r.lock !== undefined && !fitsU32(r.lock)) return false;
  for (let k = 0; k < 12; k++) if (!fitsU64(fixed64Of(r, k))) return false;
  return true;
}

interface EncodedTrace {
  readonly traceparent: Uint8Array;
  readonly tracestate: Uint8Array;
  readonly size: number;
}

function encodedTrace(trace: TraceContext | undefined): EncodedTrace | undefined {
  if (trace === undefined) return undefined;
  const traceparent = utf8.encode(trace.traceparent);
  const tracestate = utf8.encode(trace.tracestate);
  const part = (bytes: Uint8Array) => (bytes.length > 0 ? 1 + varintSize(bytes.length) + bytes.length : 0);
  return { traceparent, tracestate, size: part(traceparent) + part(tracestate) };
}

function writeEncodedTrace(out: Uint8Array, at: number, fieldNo: number, trace: EncodedTrace): number {
  at = writeVarint(out, at, (fieldNo << 3) | WireType.LengthDelimited);
  at = writeVarint(out, at, trace.size);
  for (const [no, bytes] of [[1, trace.traceparent], [2, trace.tracestate]] as const) {
    if (bytes.length === 0) continue;
    out[at++] = (no << 3) | WireType.LengthDelimited;
    at = writeVarint(out, at, bytes.length);
    out.set(bytes, at);
    at += bytes.length;
  }
  return at;
}

const utf8 = new TextEncoder();
const U64_LIMIT = 1n << 64n;

const fitsU64 = (value: bigint) => value >= 0n && value < U64_LIMIT;

/**
 * The memory node encodes one of these per doorbell. Written in two passes (sizes, then bytes into
 * one buffer) because BinaryWriter.fixed64 allocates a chunk and a DataView per value and splits
 * its buffer at each: the top self frame of a busy memory node. Values the wire cannot carry (a
 * negative status, a value outside uint64) go through BinaryWriter, which rejects them as before.
 */
export function encodeCompletionBatch(batch: CompletionBatch): Uint8Array {
  const completions = batch.completions;
  const sizes = new Array<number>(completions.length);
  const details = new Array<Uint8Array | undefined>(completions.length);
  let total = 0;
  for (let i = 0; i < completions.length; i++) {
    const c = completions[i]!;
    if (c.status < 0 || (c.valueLo !== undefined && !fitsU64(c.valueLo)) || !fitsU64(c.valueHi)) return encodeCompletionBatchWithWriter(batch);
    let size = c.id !== 0 ? 1 + varintSize(c.id) : 0;
    if (c.status !== 0) size += 1 + varintSize(c.status);
    if (c.valueLo !== undefined) size += 9;
    if (c.valueHi !== 0n) size += 9;
    if (c.data !== undefined) size += 1 + varintSize(c.data.length) + c.data.length;
    if (c.detail !== undefined) {
      const detail = utf8.encode(c.detail);
      details[i] = detail;
      size += 1 + varintSize(detail.length) + detail.length;
    }
    sizes[i] = size;
    total += 1 + varintSize(size) + size;
  }
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let at = 0;
  for (let i = 0; i < completions.length; i++) {
    const c = completions[i]!;
    out[at++] = (1 << 3) | WireType.LengthDelimited;
    at = writeVarint(out, at, sizes[i]!);
    if (c.id !== 0) {
      out[at++] = (1 << 3) | WireType.Varint;
      at = writeVarint(out, at, c.id);
    }
    if (c.status !== 0) {
      out[at++] = (2 << 3) | WireType.Varint;
      at = writeVarint(out, at, c.status);
    }
    if (c.valueLo !== undefined) {
      out[at++] = (3 << 3) | WireType.Bit64;
      view.setBigUint64(at, c.valueLo, true);
      at += 8;
    }
    if (c.valueHi !== 0n) {
      out[at++] = (4 << 3) | WireType.Bit64;
      view.setBigUint64(at, c.valueHi, true);
      at += 8;
    }
    if (c.data !== undefined) {
      out[at++] = (5 << 3) | WireType.LengthDelimited;
      at = writeVarint(out, at, c.data.length);
      out.set(c.data, at);
      at += c.data.length;
    }
    const detail = details[i];
    if (detail !== undefined) {
      out[at++] = (6 << 3) | WireType.LengthDelimited;
      at = writeVarint(out, at, detail.length);
      out.set(detail, at);
      at += detail.length;
    }
  }
  return out;
}

/** The BinaryWriter form of encodeCompletionBatch: the reference for values outside its fast path. */
export function encodeCompletionBatchWithWriter(batch: CompletionBatch): Uint8Array {
  const w = new BinaryWriter();
  for (const c of batch.completions) {
    w.tag(1, WireType.LengthDelimited).fork();
    writeU32(w, 1, c.id);
    if (c.status !== 0) w.tag(2, WireType.Varint).int32(c.status);
    if (c.valueLo !== undefined) w.tag(3, WireType.Bit64).fixed64(c.valueLo);
    writeFixed64(w, 4, c.valueHi);
    if (c.data !== undefined) w.tag(5, WireType.LengthDelimited).bytes(c.data);
    if (c.detail !== undefined) w.tag(6, WireType.LengthDelimited).string(c.detail);
    w.join();
  }
  return w.finish();
}

// ---- decode ----

/** Blank messages with every field at its proto3 default, shaped like the generated types. */
export function blankWorkRequest(): WorkRequest {
  return {
    $typeName: 'lockfabric.v1.WorkRequest',
    id: 0,
    opcode: 0,
    node: 0,
    region: 0,
    offset: 0n,
    length: 0,
    rkey: 0,
    compareLo: 0n,
    compareHi: 0n,
    swapLo: 0n,
    swapHi: 0n,
    addLo: 0n,
    addHi: 0n,
    compareMaskLo: 0n,
    compareMaskHi: 0n,
    swapMaskLo: 0n,
    swapMaskHi: 0n,
    boundaryMaskLo: 0n,
    boundaryMaskHi: 0n,
    width: 0,
    data: new Uint8Array(0),
  };
}

export function blankCompletion(): Completion {
  return { $typeName: 'lockfabric.v1.Completion', id: 0, status: 0, valueHi: 0n };
}

function blankTrace(): TraceContext {
  return { $typeName: 'lockfabric.v1.TraceContext', traceparent: '', tracestate: '' };
}

/** Reads a message body of `length` bytes, calling `field` for each field; unknown fields are skipped. */
export class FrameReader {
  private readonly reader: BinaryReader;

  constructor(
    bytes: Uint8Array,
    private readonly source: string,
    private readonly what: string,
  ) {
    this.reader = new BinaryReader(bytes);
  }

  fail(detail: string): never {
    throw new MalformedInputError(this.source, `not a ${this.what}: ${detail}`);
  }

  /** Runs `field(no, wireType)` for every field up to `end`; a handler returns false for fields it does not know. */
  fields(end: number, field: (fieldNo: number, wireType: WireType) => boolean): void {
    const r = this.reader;
    while (r.pos < end) {
      const [fieldNo, wireType] = r.tag();
      if (!field(fieldNo, wireType)) {
        if (wireType === WireType.StartGroup || wireType === WireType.EndGroup) this.fail(`group field ${fieldNo}`);
        r.skip(wireType, fieldNo);
      }
      if (r.pos > end) this.fail(`field ${fieldNo} runs past its message`);
    }
  }

  expect(fieldNo: number, actual: WireType, wanted: WireType): void {
    if (actual !== wanted) this.fail(`field ${fieldNo} has wire type ${actual}, expected ${wanted}`);
  }

  uint32(): number {
    return this.reader.uint32() >>> 0;
  }

  int32(): number {
    return this.reader.int32();
  }

  uint64(): bigint {
    return BigInt(this.reader.uint64());
  }

  fixed64(): bigint {
    return BigInt(this.reader.fixed64());
  }

  bytes(): Uint8Array {
    return this.reader.bytes();
  }

  string(): string {
    return this.reader.string();
  }

  /** Starts a length-delimited sub-message; returns its end offset. */
  begin(): number {
    const length = this.reader.uint32();
    const end = this.reader.pos + length;
    if (end > this.reader.len) this.fail('sub-message length beyond the frame');
    return end;
  }

  get len(): number {
    return this.reader.len;
  }
}

export function readTrace(f: FrameReader, into: TraceContext | undefined): TraceContext {
  const trace = into ?? blankTrace();
  const end = f.begin();
  f.fields(end, (no, wt) => {
    if (no === 1 || no === 2) {
      f.expect(no, wt, WireType.LengthDelimited);
      if (no === 1) trace.traceparent = f.string();
      else trace.tracestate = f.string();
      return true;
    }
    return false;
  });
  return trace;
}

const WORK_REQUEST_FIXED64: Readonly<Record<number, keyof WorkRequest>> = {
  8: 'compareLo',
  9: 'compareHi',
  10: 'swapLo',
  11: 'swapHi',
  12: 'addLo',
  13: 'addHi',
  14: 'compareMaskLo',
  15: 'compareMaskHi',
  16: 'swapMaskLo',
  17: 'swapMaskHi',
  18: 'boundaryMaskLo',
  19: 'boundaryMaskHi',
};

function readWorkRequest(f: FrameReader): WorkRequest {
  const r = blankWorkRequest();
  const end = f.begin();
  f.fields(end, (no, wt) => {
    const fixed = WORK_REQUEST_FIXED64[no];
    if (fixed !== undefined) {
      f.expect(no, wt, WireType.Bit64);
      (r as unknown as Record<string, bigint>)[fixed] = f.fixed64();
      return true;
    }
    switch (no) {
      case 1:
      case 3:
      case 4:
      case 6:
      case 7:
      case 20:
      case 22: {
        f.expect(no, wt, WireType.Varint);
        const value = f.uint32();
        if (no === 1) r.id = value;
        else if (no === 3) r.node = value;
        else if (no === 4) r.region = value;
        else if (no === 6) r.length = value;
        else if (no === 7) r.rkey = value;
        else if (no === 20) r.width = value;
        else r.lock = value;
        return true;
      }
      case 2:
        f.expect(no, wt, WireType.Varint);
        r.opcode = f.int32();
        return true;
      case 5:
        f.expect(no, wt, WireType.Varint);
        r.offset = f.uint64();
        return true;
      case 21:
        f.expect(no, wt, WireType.LengthDelimited);
        r.data = f.bytes();
        return true;
      case 23:
        f.expect(no, wt, WireType.LengthDelimited);
        r.trace = readTrace(f, r.trace);
        return true;
      default:
        return false;
    }
  });
  return r;
}

/** Decodes a WorkRequestBatch; anything malformed throws {@link MalformedInputError} naming `source`. */
export function decodeWorkRequestBatch(bytes: Uint8Array, source: string): WorkRequestBatch {
  const f = new FrameReader(bytes, source, 'lockfabric.v1.WorkRequestBatch');
  const batch: WorkRequestBatch = { $typeName: 'lockfabric.v1.WorkRequestBatch', initiator: 0, requests: [] };
  guard(f, () =>
    f.fields(f.len, (no, wt) => {
      if (no === 1) {
        f.expect(no, wt, WireType.Varint);
        batch.initiator = f.uint32();
      } else if (no === 2) {
        f.expect(no, wt, WireType.LengthDelimited);
        batch.requests.push(readWorkRequest(f));
      } else if (no === 3) {
        f.expect(no, wt, WireType.LengthDelimited);
        batch.trace = readTrace(f, batch.trace);
      } else return false;
      return true;
    }),
  );
  return batch;
}

function readCompletion(f: FrameReader): Completion {
  const c = blankCompletion();
  const end = f.begin();
  f.fields(end, (no, wt) => {
    switch (no) {
      case 1:
        f.expect(no, wt, WireType.Varint);
        c.id = f.uint32();
        return true;
      case 2:
        f.expect(no, wt, WireType.Varint);
        c.status = f.int32();
        return true;
      case 3:
      case 4:
        f.expect(no, wt, WireType.Bit64);
        if (no === 3) c.valueLo = f.fixed64();
        else c.valueHi = f.fixed64();
        return true;
      case 5:
        f.expect(no, wt, WireType.LengthDelimited);
        c.data = f.bytes();
        return true;
      case 6:
        f.expect(no, wt, WireType.LengthDelimited);
        c.detail = f.string();
        return true;
      default:
        return false;
    }
  });
  return c;
}

export function decodeCompletionBatch(bytes: Uint8Array, source: string): CompletionBatch {
  const f = new FrameReader(bytes, source, 'lockfabric.v1.CompletionBatch');
  const batch: CompletionBatch = { $typeName: 'lockfabric.v1.CompletionBatch', completions: [] };
  guard(f, () =>
    f.fields(f.len, (no, wt) => {
      if (no !== 1) return false;
      f.expect(no, wt, WireType.LengthDelimited);
      batch.completions.push(readCompletion(f));
      return true;
    }),
  );
  return batch;
}

/** The reader throws plain Errors (truncation, bad UTF-8, overlong varints); they are malformed input too. */
export function guard(f: FrameReader, body: () => void): void {
  try {
    body();
  } catch (error) {
    if (error instanceof MalformedInputError) throw error;
    f.fail(errorMessage(error));
  }
}
