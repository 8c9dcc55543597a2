import type { TraceContext } from './gen/lockfabric/v1/common_pb.js';
import type { SpanContextRef } from './ports.js';
import { isSpanContextValid } from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';

/** Header (NATS) and metadata (gRPC) key carrying W3C trace context. */
export const TRACEPARENT_HEADER = 'traceparent';

/** True when the ref names a real span (OpenTelemetry's check: lowercase hex ids, not all zeros) with one-byte flags. */
export function isValidSpanContext(ref: SpanContextRef): boolean {
  return isSpanContextValid(ref) && Number.isInteger(ref.traceFlags) && ref.traceFlags >= 0 && ref.traceFlags <= 0xff;
}

/** W3C `traceparent` (version 00) of a span. Throws RangeError for an invalid ref: that is a bug in the caller. */
export function formatTraceparent(ref: SpanContextRef): string {
  if (!isValidSpanContext(ref)) throw new RangeError(`not a valid span context: ${JSON.stringify(ref)}`);
  return `00-${ref.traceId}-${ref.spanId}-${ref.traceFlags.toString(16).padStart(2, '0')}`;
}

/**
 * The span a W3C `traceparent` names, or undefined when the header is absent or invalid: the
 * specification says to ignore a bad header (and start a new trace), never to fail the request.
 * Parsing is OpenTelemetry's own (`parseTraceParent`: version ff refused, extra fields only after
 * a later version); we only trim the header first.
 */
export function parseTraceparent(header: string | null | undefined): SpanContextRef | undefined {
  if (typeof header !== 'string') return undefined;
  const parsed = parseTraceParent(header.trim());
  return parsed === null ? undefined : { traceId: parsed.traceId, spanId: parsed.spanId, traceFlags: parsed.traceFlags };
}

/** The wire form of a span's context; undefined stays undefined so the field is not sent at all. */
export function traceContextToWire(ref: SpanContextRef | undefined): TraceContext | undefined {
  return ref === undefined ? undefined : { $typeName: 'lockfabric.v1.TraceContext', traceparent: formatTraceparent(ref), tracestate: '' };
}

export function traceContextFromWire(context: TraceContext | undefined): SpanContextRef | undefined {
  return parseTraceparent(context?.traceparent);
}
