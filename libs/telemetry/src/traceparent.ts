import type { SpanContextRef } from '@lockfabric/ports';

/** Header (NATS) and metadata (gRPC) key carrying W3C trace context. */
export const TRACEPARENT_HEADER = 'traceparent';

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ALL_ZERO = /^0+$/;
// version-traceid-parentid-flags; later versions may append `-…` fields after these four.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const VERSION_00_LENGTH = 55;

/** True when the ids are lowercase hex of the right length, not all zero, and the flags fit a byte. */
export function isValidSpanContextRef(ref: SpanContextRef): boolean {
  return (
    TRACE_ID.test(ref.traceId) &&
    !ALL_ZERO.test(ref.traceId) &&
    SPAN_ID.test(ref.spanId) &&
    !ALL_ZERO.test(ref.spanId) &&
    Number.isInteger(ref.traceFlags) &&
    ref.traceFlags >= 0 &&
    ref.traceFlags <= 0xff
  );
}

/** `00-<trace-id>-<span-id>-<flags>`, or `undefined` when the reference is not a valid span context. */
export function formatTraceparent(ref: SpanContextRef): string | undefined {
  if (!isValidSpanContextRef(ref)) return undefined;
  return `00-${ref.traceId}-${ref.spanId}-${ref.traceFlags.toString(16).padStart(2, '0')}`;
}

/**
 * Parses a W3C `traceparent` value. Garbage (wrong shape, uppercase hex, zero ids, version `ff`,
 * trailing data on version 00) yields `undefined`; it never throws, because headers come from
 * the network. Versions above 00 are read by their first four fields, as the spec asks.
 */
export function parseTraceparent(value: string | null | undefined): SpanContextRef | undefined {
  if (typeof value !== 'string') return undefined;
  const header = value.trim();
  const match = TRACEPARENT.exec(header);
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  if (version === 'ff') return undefined;
  if (version === '00' && (rest !== undefined || header.length !== VERSION_00_LENGTH)) return undefined;
  const ref: SpanContextRef = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
  return isValidSpanContextRef(ref) ? ref : undefined;
}
