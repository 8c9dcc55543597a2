import type { TraceContext } from './gen/lockfabric/v1/common_pb.js';
import type { SpanContextRef } from './ports.js';

/** Header (NATS) and metadata (gRPC) key carrying W3C trace context. */
export const TRACEPARENT_HEADER = 'traceparent';

const HEX_32 = /^[0-9a-f]{32}$/;
const HEX_16 = /^[0-9a-f]{16}$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
/** version-traceId-spanId-flags, version 00 exactly; later versions may append fields after a dash. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** True when the ref names a real span: lowercase hex ids of the right length, not all zeros. */
export function isValidSpanContext(ref: SpanContextRef): boolean {
  return (
    HEX_32.test(ref.traceId) &&
    ref.traceId !== ZERO_TRACE_ID &&
    HEX_16.test(ref.spanId) &&
    ref.spanId !== ZERO_SPAN_ID &&
    Number.isInteger(ref.traceFlags) &&
    ref.traceFlags >= 0 &&
    ref.traceFlags <= 0xff
  );
}

/** W3C `traceparent` (version 00) of a span. Throws RangeError for an invalid ref: that is a bug in the caller. */
export function formatTraceparent(ref: SpanContextRef): string {
  if (!isValidSpanContext(ref)) throw new RangeError(`not a valid span context: ${JSON.stringify(ref)}`);
  return `00-${ref.traceId}-${ref.spanId}-${ref.traceFlags.toString(16).padStart(2, '0')}`;
}

/**
 * The span a W3C `traceparent` names, or undefined when the header is absent or invalid: the
 * specification says to ignore a bad header (and start a new trace), never to fail the request.
 */
export function parseTraceparent(header: string | null | undefined): SpanContextRef | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === undefined || traceId === undefined || spanId === undefined || flags === undefined) return undefined;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const ref = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
  return isValidSpanContext(ref) ? ref : undefined;
}

/** The wire form of a span's context; undefined stays undefined so the field is not sent at all. */
export function traceContextToWire(ref: SpanContextRef | undefined): TraceContext | undefined {
  return ref === undefined ? undefined : { $typeName: 'lockfabric.v1.TraceContext', traceparent: formatTraceparent(ref), tracestate: '' };
}

export function traceContextFromWire(context: TraceContext | undefined): SpanContextRef | undefined {
  return parseTraceparent(context?.traceparent);
}
