import { fromBinary, fromJson } from '@bufbuild/protobuf';
import type { JsonValue } from '@bufbuild/protobuf';
import { ExportTraceServiceRequestSchema } from './gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import type { ExportTraceServiceRequest } from './gen/opentelemetry/proto/collector/trace/v1/trace_service_pb.js';
import { attributesOf, decoding, OtlpDecodeError, originOf, toHex } from './values.js';
import type { OtlpAttributes } from './values.js';

export interface ReceivedLink {
  readonly traceId: string;
  readonly spanId: string;
  readonly attributes: OtlpAttributes;
}

export interface ReceivedSpan {
  /** `service.name` of the resource the span was exported under. */
  readonly serviceName: string | undefined;
  readonly resource: OtlpAttributes;
  readonly scope: string | undefined;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: OtlpAttributes;
  readonly links: readonly ReceivedLink[];
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  readonly statusMessage: string;
  /** Span flags (W3C trace flags in the low byte). */
  readonly flags: number;
}

/** The spans of an OTLP/HTTP protobuf trace export body. Throws {@link OtlpDecodeError}. */
export function decodeTraceRequestProtobuf(body: Uint8Array): ReceivedSpan[] {
  return spansOf(decoding('trace protobuf', () => fromBinary(ExportTraceServiceRequestSchema, body)));
}

/**
 * The spans of an OTLP/HTTP JSON trace export body. OTLP/JSON is the protobuf JSON mapping except
 * that trace and span ids are hex rather than base64, so ids are rewritten before protobuf-es
 * reads it. Unknown fields are ignored, as the OTLP specification asks of receivers. Throws
 * {@link OtlpDecodeError}.
 */
export function decodeTraceRequestJson(text: string): ReceivedSpan[] {
  const json = decoding('trace JSON', () => JSON.parse(text) as JsonValue);
  const request = decoding('trace JSON', () => fromJson(ExportTraceServiceRequestSchema, hexIdsToBase64(json), { ignoreUnknownFields: true }));
  return spansOf(request);
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

function hexIdsToBase64(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(hexIdsToBase64);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, JsonValue> = {};
  for (const [key, item] of Object.entries(value)) {
    if (!ID_FIELDS.has(key) || item === null) out[key] = hexIdsToBase64(item);
    else if (typeof item === 'string' && /^([0-9a-fA-F]{2})*$/.test(item)) out[key] = Buffer.from(item, 'hex').toString('base64');
    else throw new OtlpDecodeError(`bad OTLP trace JSON: ${key} is not hex`);
  }
  return out;
}

function spansOf(request: ExportTraceServiceRequest): ReceivedSpan[] {
  return request.resourceSpans.flatMap((rs) =>
    rs.scopeSpans.flatMap((ss) => {
      const origin = originOf(rs.resource, ss.scope?.name);
      return ss.spans.map(
        (span): ReceivedSpan => ({
          ...origin,
          traceId: toHex(span.traceId),
          spanId: toHex(span.spanId),
          parentSpanId: toHex(span.parentSpanId),
          name: span.name,
          kind: span.kind,
          startTimeUnixNano: span.startTimeUnixNano,
          endTimeUnixNano: span.endTimeUnixNano,
          attributes: attributesOf(span.attributes),
          links: span.links.map((link) => ({ traceId: toHex(link.traceId), spanId: toHex(link.spanId), attributes: attributesOf(link.attributes) })),
          statusCode: span.status?.code ?? 0,
          statusMessage: span.status?.message ?? '',
          flags: span.flags,
        }),
      );
    }),
  );
}
