import {
  type Completion as WireCompletion,
  type CompletionBatch as WireCompletionBatch,
  type WorkRequest as WireWorkRequest,
  type WorkRequestBatch as WireWorkRequestBatch,
} from './gen/lockfabric/v1/verbs_pb.js';
import { opcodes, verbStatuses } from './enums.js';
import { MalformedInputError, type Completion, type SpanContextRef, type WorkRequest } from './ports.js';
import { traceContextFromWire, traceContextToWire } from './traceparent.js';
import { joinU128, splitU128 } from './u128.js';
import { blankCompletion, blankWorkRequest } from './verbs-binary.js';

const MAX_SAFE_OFFSET = BigInt(Number.MAX_SAFE_INTEGER);

/** Distributes over a union, so each member keeps its own fields. */
type Writable<T> = T extends unknown ? { -readonly [K in keyof T]: T[K] } : never;

export { decodeCompletionBatch, decodeWorkRequestBatch, encodeCompletionBatch, encodeWorkRequestBatch } from './verbs-binary.js';

/**
 * The wire form of one port work request. `id` is the queue pair's; `trace` is set only when the
 * request's operation differs from the batch's (see verbs.proto).
 * Throws RangeError for values outside the unsigned 128-bit range: callers that cannot rule those
 * out check {@link isU128} first and complete the request locally.
 */
export function workRequestToWire(wr: WorkRequest, id: number, trace?: SpanContextRef): WireWorkRequest {
  const out = blankWorkRequest();
  out.id = id;
  out.opcode = opcodes.toWire(wr.op);
  out.node = wr.addr.node;
  out.region = wr.addr.region;
  out.rkey = wr.addr.rkey;
  out.offset = BigInt(wr.addr.offset);
  if (wr.lock !== undefined) out.lock = wr.lock;
  if (trace !== undefined) out.trace = traceContextToWire(trace);
  switch (wr.op) {
    case 'read':
      out.length = wr.length;
      break;
    case 'write':
      out.data = wr.data;
      break;
    case 'cas':
      ({ lo: out.compareLo, hi: out.compareHi } = splitU128(wr.compare, 'compare'));
      ({ lo: out.swapLo, hi: out.swapHi } = splitU128(wr.swap, 'swap'));
      break;
    case 'faa':
      ({ lo: out.addLo, hi: out.addHi } = splitU128(wr.add, 'add'));
      break;
    case 'masked-cas':
      out.width = wr.width;
      ({ lo: out.compareLo, hi: out.compareHi } = splitU128(wr.compare, 'compare'));
      ({ lo: out.swapLo, hi: out.swapHi } = splitU128(wr.swap, 'swap'));
      ({ lo: out.compareMaskLo, hi: out.compareMaskHi } = splitU128(wr.compareMask, 'compareMask'));
      ({ lo: out.swapMaskLo, hi: out.swapMaskHi } = splitU128(wr.swapMask, 'swapMask'));
      break;
    case 'masked-faa':
      out.width = wr.width;
      ({ lo: out.addLo, hi: out.addHi } = splitU128(wr.add, 'add'));
      ({ lo: out.boundaryMaskLo, hi: out.boundaryMaskHi } = splitU128(wr.boundaryMask, 'boundaryMask'));
      break;
  }
  return out;
}

/**
 * The port work request a wire request describes. Shape errors (unknown opcode, a width other than
 * 8 or 16, an offset beyond 2^53) throw {@link MalformedInputError}; whether the verb makes sense for
 * the memory (bounds, alignment, value ranges) is the NIC's to answer with a status.
 */
export function workRequestFromWire(wire: WireWorkRequest, source: string): WorkRequest {
  if (wire.offset > MAX_SAFE_OFFSET) throw new MalformedInputError(source, `work request ${wire.id}: offset ${wire.offset} is beyond 2^53`);
  const addr = { node: wire.node, region: wire.region, rkey: wire.rkey, offset: Number(wire.offset) };
  const op = opcodes.fromWire(wire.opcode, source);
  // Built field by field, not by spreading a shared base: this runs once per verb on both ends.
  let request: Writable<WorkRequest>;
  switch (op) {
    case 'read':
      request = { op, addr, length: wire.length };
      break;
    case 'write':
      request = { op, addr, data: wire.data };
      break;
    case 'cas':
      request = { op, addr, compare: joinU128(wire.compareLo, wire.compareHi), swap: joinU128(wire.swapLo, wire.swapHi) };
      break;
    case 'faa':
      request = { op, addr, add: joinU128(wire.addLo, wire.addHi) };
      break;
    case 'masked-cas':
      request = {
        op,
        addr,
        width: atomicWidth(wire, source),
        compare: joinU128(wire.compareLo, wire.compareHi),
        swap: joinU128(wire.swapLo, wire.swapHi),
        compareMask: joinU128(wire.compareMaskLo, wire.compareMaskHi),
        swapMask: joinU128(wire.swapMaskLo, wire.swapMaskHi),
      };
      break;
    case 'masked-faa':
      request = {
        op,
        addr,
        width: atomicWidth(wire, source),
        add: joinU128(wire.addLo, wire.addHi),
        boundaryMask: joinU128(wire.boundaryMaskLo, wire.boundaryMaskHi),
      };
      break;
  }
  if (wire.lock !== undefined) request.lock = wire.lock;
  return request;
}

/** Trace context a request carries of its own (set when it differs from its batch's). */
export function workRequestTrace(wire: WireWorkRequest): SpanContextRef | undefined {
  return traceContextFromWire(wire.trace);
}

function atomicWidth(wire: WireWorkRequest, source: string): 8 | 16 {
  if (wire.width === 8 || wire.width === 16) return wire.width;
  throw new MalformedInputError(source, `work request ${wire.id}: masked atomic width ${wire.width} is not 8 or 16`);
}

export function completionToWire(completion: Completion, id: number): WireCompletion {
  const out = blankCompletion();
  out.id = id;
  out.status = verbStatuses.toWire(completion.status);
  if (completion.value !== undefined) ({ lo: out.valueLo, hi: out.valueHi } = splitU128(completion.value, 'completion value'));
  if (completion.data !== undefined) out.data = completion.data;
  if (completion.detail !== undefined) out.detail = completion.detail;
  return out;
}

export function completionFromWire(wire: WireCompletion, source: string): Completion {
  const status = verbStatuses.fromWire(wire.status, source);
  const completion: { -readonly [K in keyof Completion]: Completion[K] } = { status };
  if (wire.valueLo !== undefined) completion.value = joinU128(wire.valueLo, wire.valueHi);
  if (wire.data !== undefined) completion.data = wire.data;
  if (wire.detail !== undefined) completion.detail = wire.detail;
  return completion;
}

/** A doorbell batch ready to encode. */
export function workRequestBatchToWire(
  initiator: number,
  requests: WireWorkRequest[],
  trace: SpanContextRef | undefined,
): WireWorkRequestBatch {
  const out: WireWorkRequestBatch = { $typeName: 'lockfabric.v1.WorkRequestBatch', initiator, requests };
  if (trace !== undefined) out.trace = traceContextToWire(trace);
  return out;
}

export function completionBatchToWire(completions: WireCompletion[]): WireCompletionBatch {
  return { $typeName: 'lockfabric.v1.CompletionBatch', completions };
}
