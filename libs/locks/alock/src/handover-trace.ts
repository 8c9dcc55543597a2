import type { SpanContextRef } from '@lockfabric/ports';
import { TRACE_AREA_BYTES } from './layout.js';

/**
 * ALock hands over by writing a budget into the successor's descriptor, not by a message, so the
 * `lock.handover` span context travels the same way: the releaser writes it into the successor's
 * trace area just before the budget (same queue pair, so it lands first), tagged with the
 * descriptor it is meant for. Only done while tracing is on; it never decides anything.
 *
 * Words: trace id high, trace id low, span id, tag = (descriptor index + 1) | trace flags · 2^8.
 */
export type TraceWords = readonly [bigint, bigint, bigint, bigint];

const HEX_TRACE_ID = /^[0-9a-f]{32}$/;
const HEX_SPAN_ID = /^[0-9a-f]{16}$/;

export function encodeTrace(context: SpanContextRef, index: number): TraceWords | undefined {
  const traceId = context.traceId.toLowerCase();
  const spanId = context.spanId.toLowerCase();
  if (!HEX_TRACE_ID.test(traceId) || !HEX_SPAN_ID.test(spanId)) return undefined;
  const tag = BigInt(index + 1) | (BigInt(context.traceFlags & 0xff) << 8n);
  return [BigInt(`0x${traceId.slice(0, 16)}`), BigInt(`0x${traceId.slice(16)}`), BigInt(`0x${spanId}`), tag];
}

/** The context in `words` if it was written for descriptor `index`, else undefined. */
export function decodeTrace(words: readonly bigint[], index: number): SpanContextRef | undefined {
  const [high, low, span, tag] = words;
  if (high === undefined || low === undefined || span === undefined || tag === undefined) return undefined;
  if (Number(tag & 0xffn) !== index + 1) return undefined;
  return {
    traceId: high.toString(16).padStart(16, '0') + low.toString(16).padStart(16, '0'),
    spanId: span.toString(16).padStart(16, '0'),
    traceFlags: Number((tag >> 8n) & 0xffn),
  };
}

export function traceBytes(words: TraceWords): Uint8Array {
  const bytes = new Uint8Array(TRACE_AREA_BYTES);
  const view = new DataView(bytes.buffer);
  words.forEach((word, i) => view.setBigUint64(i * 8, word, true));
  return bytes;
}
