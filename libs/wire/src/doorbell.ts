import type { Completion, SpanContextRef, VerbOpcode, WorkRequest } from './ports.js';
import { parseTraceparent } from './traceparent.js';
import { opcodes, verbStatuses } from './enums.js';
import { joinU128, U128_MAX, U64_MASK as U64_MAX } from './u128.js';
import { varintSize, writeVarint } from './varint.js';

/**
 * The memory node's side of a doorbell, without the generated message shapes in between: a
 * WorkRequestBatch frame read straight into port work requests, and port completions written
 * straight into a CompletionBatch. Both take only the common shape — every field known, wire
 * types right, ASCII trace contexts, every request valid — and say "not mine" (undefined) for
 * anything else, which the caller then answers through the general codec (decodeWorkRequestBatch,
 * workRequestFromWire, completionToWire): malformed input gets the same answer either way, and
 * tests hold both paths to the same output on the frames this one takes.
 */

/** A doorbell read by {@link decodeDoorbell}: ids of the requests in order (the queue pair's). */
export interface Doorbell {
  readonly initiator: number;
  readonly requests: WorkRequest[];
  readonly ids: number[];
  /** The batch's trace context, as traceContextFromWire reads it. */
  readonly trace?: SpanContextRef;
  /** Per request, as workRequestTrace reads it; absent when no request carries a trace context. */
  readonly requestTraces?: (SpanContextRef | undefined)[];
}

/** Protobuf wire types used here. */
const VARINT = 0;
const BIT64 = 1;
const LEN = 2;

/**
 * The reader's frame and position. One reader for the module, reused by every call, so nothing is
 * allocated per frame for it: safe on one thread, as nothing decodeDoorbell calls decodes a frame.
 */
class Reader {
  buf: Uint8Array = EMPTY;
  view: DataView = EMPTY_VIEW;
  at = 0;
  /** Set by a read that met something the fast path does not take. */
  bail = false;
  /** The `traceparent` of the request just read, when it carried a trace context. */
  requestTraceparent: string | undefined = undefined;

  /** A varint of at most 5 bytes below 2^32; anything longer or larger bails. */
  u32(): number {
    const buf = this.buf;
    const at = this.at;
    // Unrolled: the first four bytes hold 28 bits, which int32 arithmetic carries exactly.
    if (at + 5 <= buf.length) {
      const b0 = buf[at]!;
      if (b0 < 0x80) {
        this.at = at + 1;
        return b0;
      }
      const b1 = buf[at + 1]!;
      let value = (b0 & 0x7f) | ((b1 & 0x7f) << 7);
      if (b1 < 0x80) {
        this.at = at + 2;
        return value;
      }
      const b2 = buf[at + 2]!;
      value |= (b2 & 0x7f) << 14;
      if (b2 < 0x80) {
        this.at = at + 3;
        return value;
      }
      const b3 = buf[at + 3]!;
      value |= (b3 & 0x7f) << 21;
      if (b3 < 0x80) {
        this.at = at + 4;
        return value;
      }
      const b4 = buf[at + 4]!;
      if (b4 <= 0x0f) {
        this.at = at + 5;
        return value + b4 * 0x1000_0000;
      }
      this.bail = true;
      return 0;
    }
    return this.u32Near(at);
  }

  /** u32 within the last five bytes of the frame. */
  private u32Near(at: number): number {
    const buf = this.buf;
    let value = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= buf.length) break;
      const byte = buf[at++]!;
      if (shift === 28 && byte > 0x0f) break;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) {
        this.at = at;
        return value;
      }
    }
    this.bail = true;
    return 0;
  }

  /**
   * A varint of at most 8 bytes that is a safe integer (an offset; beyond 2^53 workRequestFromWire
   * refuses it); else bails. Doubles add the 7-bit groups exactly below 2^53, and a sum at or above
   * it cannot round down below it.
   */
  u53(): number {
    const low = this.u32Short();
    if (low >= 0) return low;
    const buf = this.buf;
    let at = this.at;
    let value = 0;
    for (let shift = 0; shift < 56; shift += 7) {
      if (at >= buf.length) break;
      const byte = buf[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) {
        if (value > Number.MAX_SAFE_INTEGER) break;
        this.at = at;
        return value;
      }
    }
    this.bail = true;
    return 0;
  }

  /** A varint of at most 4 bytes (28 bits), or -1 (position unchanged) when it is longer or runs off the frame. */
  private u32Short(): number {
    const buf = this.buf;
    const at = this.at;
    let value = 0;
    for (let i = 0; i < 4 && at + i < buf.length; i++) {
      const byte = buf[at + i]!;
      value |= (byte & 0x7f) << (7 * i);
      if (byte < 0x80) {
        this.at = at + i + 1;
        return value;
      }
    }
    return -1;
  }

  fixed64(): bigint {
    const at = this.at;
    if (at + 8 > this.buf.length) {
      this.bail = true;
      return 0n;
    }
    this.at = at + 8;
    return this.view.getBigUint64(at, true);
  }

  /**
   * A TraceContext body (its length first): its `traceparent` merged over `into` (protobuf merges
   * a repeated message field; an absent field keeps the earlier value). ASCII text only, which
   * every UTF-8 decoder reads alike; anything else bails.
   */
  traceparent(into: string | undefined): string {
    let traceparent = into ?? '';
    const length = this.lengthOf();
    const end = this.at + length;
    while (this.at < end && !this.bail) {
      const tag = this.u32();
      if (tag !== ((1 << 3) | LEN) && tag !== ((2 << 3) | LEN)) {
        this.bail = true;
        break;
      }
      const size = this.lengthOf();
      if (this.bail) break;
      const start = this.at;
      this.at += size;
      if (this.at > end) this.bail = true;
      for (let i = start; i < this.at && !this.bail; i++) if (this.buf[i]! >= 0x80) this.bail = true;
      if (tag === ((1 << 3) | LEN) && !this.bail) traceparent = ascii.decode(this.buf.subarray(start, this.at));
    }
    return traceparent;
  }

  /** Length of a length-delimited field's body, which starts at `at`. */
  lengthOf(): number {
    const length = this.u32();
    if (this.at + length > this.buf.length) this.bail = true;
    return length;
  }
}

const ascii = new TextDecoder();
const EMPTY = new Uint8Array(0);
const EMPTY_VIEW = new DataView(EMPTY.buffer);
const reader = new Reader();

/** Port opcode by wire number (opcodes in enums.ts); holes are numbers this build does not know. */
const OPCODES: readonly (VerbOpcode | undefined)[] = opcodeTable();

function opcodeTable(): (VerbOpcode | undefined)[] {
  const table: (VerbOpcode | undefined)[] = [];
  for (const op of opcodes.values()) table[opcodes.toWire(op)] = op;
  return Array.from(table);
}

/** Distributes over a union, so each member keeps its own fields. */
type Writable<T> = T extends unknown ? { -readonly [K in keyof T]: T[K] } : never;

/**
 * Reads one WorkRequest body ending at `end` into a port work request, as decodeWorkRequestBatch
 * and workRequestFromWire together would; undefined (and `bail`) for anything they would treat
 * differently or refuse.
 */
function readRequest(r: Reader, end: number, ids: number[]): WorkRequest | undefined {
  let id = 0, opcode = 0, node = 0, region = 0, offset = 0, length = 0, rkey = 0, width = 0;
  let lock: number | undefined;
  let data: Uint8Array | undefined;
  let compareLo = 0n, compareHi = 0n, swapLo = 0n, swapHi = 0n, addLo = 0n, addHi = 0n;
  let compareMaskLo = 0n, compareMaskHi = 0n, swapMaskLo = 0n, swapMaskHi = 0n, boundaryMaskLo = 0n, boundaryMaskHi = 0n;
  r.requestTraceparent = undefined;
  while (r.at < end && !r.bail) {
    const tag = r.u32();
    const no = tag >>> 3;
    const wt = tag & 7;
    if (no >= 8 && no <= 19) {
      if (wt !== BIT64) return undefined;
      const value = r.fixed64();
      switch (no) {
        case 8: compareLo = value; break;
        case 9: compareHi = value; break;
        case 10: swapLo = value; break;
        case 11: swapHi = value; break;
        case 12: addLo = value; break;
        case 13: addHi = value; break;
        case 14: compareMaskLo = value; break;
        case 15: compareMaskHi = value; break;
        case 16: swapMaskLo = value; break;
        case 17: swapMaskHi = value; break;
        case 18: boundaryMaskLo = value; break;
        default: boundaryMaskHi = value;
      }
    } else if (no === 23) {
      if (wt !== LEN) return undefined;
      r.requestTraceparent = r.traceparent(r.requestTraceparent);
    } else if (no === 21) {
      if (wt !== LEN) return undefined;
      const size = r.lengthOf();
      data = r.buf.subarray(r.at, r.at + size);
      r.at += size;
    } else {
      if (wt !== VARINT) return undefined;
      switch (no) {
        case 1: id = r.u32(); break;
        case 2: opcode = r.u32(); break;
        case 3: node = r.u32(); break;
        case 4: region = r.u32(); break;
        case 5: offset = r.u53(); break;
        case 6: length = r.u32(); break;
        case 7: rkey = r.u32(); break;
        case 20: width = r.u32(); break;
        case 22: lock = r.u32(); break;
        default: return undefined; // unknown fields
      }
    }
    if (r.at > end) return undefined;
  }
  if (r.bail) return undefined;
  const op = OPCODES[opcode];
  if (op === undefined) return undefined;
  const addr = { node, region, rkey, offset };
  let request: Writable<WorkRequest>;
  // Same shapes, built in the same property order, as workRequestFromWire's.
  switch (op) {
    case 'read':
      request = { op, addr, length };
      break;
    case 'write':
      request = { op, addr, data: data ?? new Uint8Array(0) };
      break;
    case 'cas':
      request = { op, addr, compare: joinU128(compareLo, compareHi), swap: joinU128(swapLo, swapHi) };
      break;
    case 'faa':
      request = { op, addr, add: joinU128(addLo, addHi) };
      break;
    case 'masked-cas':
      if (width !== 8 && width !== 16) return undefined;
      request = {
        op,
        addr,
        width,
        compare: joinU128(compareLo, compareHi),
        swap: joinU128(swapLo, swapHi),
        compareMask: joinU128(compareMaskLo, compareMaskHi),
        swapMask: joinU128(swapMaskLo, swapMaskHi),
      };
      break;
    default:
      if (width !== 8 && width !== 16) return undefined;
      request = { op, addr, width, add: joinU128(addLo, addHi), boundaryMask: joinU128(boundaryMaskLo, boundaryMaskHi) };
  }
  if (lock !== undefined) request.lock = lock;
  ids.push(id);
  return request as WorkRequest;
}

/**
 * A WorkRequestBatch frame as port work requests, or undefined when the frame is not of the common
 * shape (see the top of this file): the general codec decides those, errors included.
 */
export function decodeDoorbell(frame: Uint8Array): Doorbell | undefined {
  const r = reader;
  r.buf = frame;
  r.view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  r.at = 0;
  r.bail = false;
  let initiator = 0;
  const requests: WorkRequest[] = [];
  const ids: number[] = [];
  let traceparent: string | undefined;
  let requestTraces: (SpanContextRef | undefined)[] | undefined;
  try {
    while (r.at < frame.length && !r.bail) {
      const tag = r.u32();
      if (tag === ((1 << 3) | VARINT)) initiator = r.u32();
      else if (tag === ((2 << 3) | LEN)) {
        const size = r.lengthOf();
        if (r.bail) break;
        const request = readRequest(r, r.at + size, ids);
        if (request === undefined) return undefined;
        if (r.requestTraceparent !== undefined) {
          // Built only once a request carries a trace context of its own (rare: see verbs.proto).
          requestTraces ??= new Array<SpanContextRef | undefined>(requests.length).fill(undefined);
          requestTraces[requests.length] = parseTraceparent(r.requestTraceparent);
        } else if (requestTraces !== undefined) requestTraces.push(undefined);
        requests.push(request);
      } else if (tag === ((3 << 3) | LEN)) traceparent = r.traceparent(traceparent);
      else return undefined; // unknown fields, wrong wire types
    }
    if (r.bail) return undefined;
    const trace = traceparent === undefined ? undefined : parseTraceparent(traceparent);
    if (trace === undefined && requestTraces === undefined) return { initiator, requests, ids };
    return { initiator, requests, ids, ...(trace !== undefined ? { trace } : {}), ...(requestTraces !== undefined ? { requestTraces } : {}) };
  } finally {
    r.buf = EMPTY;
    r.view = EMPTY_VIEW;
  }
}

// ---- completions ----

/** verbStatuses' numbers (enums.ts), all below 128: one varint byte each. */
const STATUS_NUMBERS: ReadonlyMap<unknown, number> = new Map<unknown, number>(verbStatuses.values().map((status) => [status, verbStatuses.toWire(status)]));
const utf8 = new TextEncoder();

/** Wire status of a completion; 0 for a status this codec does not know (the general one then refuses it). */
function statusNumber(completion: Completion): number {
  return STATUS_NUMBERS.get(completion.status) ?? 0;
}

/**
 * The CompletionBatch answering `ids` with `completions` (one each, in order), byte for byte what
 * completionToWire and encodeCompletionBatch make of them; undefined when a completion is not one
 * they would take as it is (unknown status, a value outside 128 bits, a missing entry), so the
 * caller goes the general way and gets its errors.
 */
export function encodeCompletions(completions: readonly Completion[], ids: readonly number[]): Uint8Array | undefined {
  const n = completions.length;
  if (ids.length !== n) return undefined;
  // Sizes first, then one buffer: sizes[i] of completion i, details[i] its detail's bytes.
  const sizes = new Array<number>(n);
  let details: (Uint8Array | undefined)[] | undefined;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const c = completions[i];
    if (c === undefined || c === null) return undefined;
    const status = statusNumber(c);
    if (status === 0) return undefined;
    const id = ids[i]!;
    let size = (id !== 0 ? 1 + varintSize(id) : 0) + 2;
    const value = c.value;
    if (value !== undefined) {
      if (typeof value !== 'bigint' || value < 0n || value > U128_MAX) return undefined;
      size += value > U64_MAX ? 18 : 9;
    }
    if (c.data !== undefined) {
      if (!(c.data instanceof Uint8Array)) return undefined;
      size += 1 + varintSize(c.data.length) + c.data.length;
    }
    if (c.detail !== undefined) {
      if (typeof c.detail !== 'string') return undefined;
      const detail = utf8.encode(c.detail);
      (details ??= new Array<Uint8Array | undefined>(n))[i] = detail;
      size += 1 + varintSize(detail.length) + detail.length;
    }
    sizes[i] = size;
    total += 1 + varintSize(size) + size;
  }
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  let p = 0;
  for (let i = 0; i < n; i++) {
    const c = completions[i]!;
    out[p++] = (1 << 3) | LEN;
    p = writeVarint(out, p, sizes[i]!);
    const id = ids[i]!;
    if (id !== 0) {
      out[p++] = (1 << 3) | VARINT;
      p = writeVarint(out, p, id);
    }
    out[p++] = (2 << 3) | VARINT;
    out[p++] = statusNumber(c);
    const value = c.value;
    if (value !== undefined) {
      out[p++] = (3 << 3) | BIT64;
      const wide = value > U64_MAX;
      dv.setBigUint64(p, wide ? value & U64_MAX : value, true);
      p += 8;
      if (wide) {
        out[p++] = (4 << 3) | BIT64;
        dv.setBigUint64(p, value >> 64n, true);
        p += 8;
      }
    }
    if (c.data !== undefined) {
      out[p++] = (5 << 3) | LEN;
      p = writeVarint(out, p, c.data.length);
      out.set(c.data, p);
      p += c.data.length;
    }
    const detail = details?.[i];
    if (detail !== undefined) {
      out[p++] = (6 << 3) | LEN;
      p = writeVarint(out, p, detail.length);
      out.set(detail, p);
      p += detail.length;
    }
  }
  return out;
}
