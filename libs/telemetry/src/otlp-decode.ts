import { readOtlpExport } from './otlp-envelope.js';
import type { OtlpItemOrigin } from './otlp-envelope.js';
import { OtlpDecodeError, narrowInt, readKeyValueInto, toHex } from './otlp-decode-values.js';
import type { OtlpAttributes, OtlpValue } from './otlp-decode-values.js';
import { WIRE_FIXED32, WIRE_FIXED64, WIRE_LENGTH_DELIMITED, WIRE_VARINT } from './protobuf-reader.js';
import type { ProtobufReader } from './protobuf-reader.js';

export { OtlpDecodeError } from './otlp-decode-values.js';
export type { OtlpAttributes, OtlpValue } from './otlp-decode-values.js';

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

// ── protobuf (opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest) ───────────────────

/** Decodes the spans of an OTLP/HTTP protobuf trace export body. Throws {@link OtlpDecodeError}. */
export function decodeTraceRequestProtobuf(body: Uint8Array): ReceivedSpan[] {
  return readOtlpExport(body, 'trace', readSpan);
}

type SpanScope = Pick<OtlpItemOrigin, 'resource' | 'scope'>;

function readSpan(reader: ProtobufReader, where: SpanScope): ReceivedSpan {
  let traceId = '';
  let spanId = '';
  let parentSpanId = '';
  let name = '';
  let kind = 0;
  let startTimeUnixNano = 0n;
  let endTimeUnixNano = 0n;
  const attributes: Record<string, OtlpValue> = {};
  const links: ReceivedLink[] = [];
  let statusCode = 0;
  let statusMessage = '';
  let flags = 0;
  while (!reader.done) {
    const field = reader.field();
    switch (field.number) {
      case 1:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        traceId = toHex(reader.bytesField());
        break;
      case 2:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        spanId = toHex(reader.bytesField());
        break;
      case 4:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        parentSpanId = toHex(reader.bytesField());
        break;
      case 5:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        name = reader.string();
        break;
      case 6:
        reader.expect(field, WIRE_VARINT);
        kind = reader.uint32();
        break;
      case 7:
        reader.expect(field, WIRE_FIXED64);
        startTimeUnixNano = reader.fixed64();
        break;
      case 8:
        reader.expect(field, WIRE_FIXED64);
        endTimeUnixNano = reader.fixed64();
        break;
      case 9:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        readKeyValueInto(reader.message(), attributes);
        break;
      case 13:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        links.push(readLink(reader.message()));
        break;
      case 15: {
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        const status = readStatus(reader.message());
        statusCode = status.code;
        statusMessage = status.message;
        break;
      }
      case 16:
        reader.expect(field, WIRE_FIXED32);
        flags = reader.fixed32();
        break;
      default:
        reader.skip(field.wireType);
    }
  }
  return {
    serviceName: serviceNameOf(where.resource),
    resource: where.resource,
    scope: where.scope,
    traceId,
    spanId,
    parentSpanId,
    name,
    kind,
    startTimeUnixNano,
    endTimeUnixNano,
    attributes,
    links,
    statusCode,
    statusMessage,
    flags,
  };
}

function readLink(reader: ProtobufReader): ReceivedLink {
  let traceId = '';
  let spanId = '';
  const attributes: Record<string, OtlpValue> = {};
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      traceId = toHex(reader.bytesField());
    } else if (field.number === 2) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      spanId = toHex(reader.bytesField());
    } else if (field.number === 4) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      readKeyValueInto(reader.message(), attributes);
    } else reader.skip(field.wireType);
  }
  return { traceId, spanId, attributes };
}

function readStatus(reader: ProtobufReader): { code: number; message: string } {
  let code = 0;
  let message = '';
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 2) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      message = reader.string();
    } else if (field.number === 3) {
      reader.expect(field, WIRE_VARINT);
      code = reader.uint32();
    } else reader.skip(field.wireType);
  }
  return { code, message };
}

// ── JSON (OTLP/JSON: lowerCamelCase keys, hex ids, int64 as decimal strings) ──────────────────────

/** Decodes the spans of an OTLP/HTTP JSON trace export body. Throws {@link OtlpDecodeError}. */
export function decodeTraceRequestJson(text: string): ReceivedSpan[] {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw new OtlpDecodeError('bad OTLP JSON: not valid JSON', { cause: error });
  }
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of jsonArray(jsonObject(root, 'request').resourceSpans, 'resourceSpans')) {
    const rs = jsonObject(resourceSpans, 'resourceSpans[]');
    const resource = rs.resource === undefined ? {} : jsonAttributes(jsonObject(rs.resource, 'resource').attributes);
    for (const scopeSpans of jsonArray(rs.scopeSpans, 'scopeSpans')) {
      const ss = jsonObject(scopeSpans, 'scopeSpans[]');
      const scopeName = ss.scope === undefined ? undefined : jsonObject(ss.scope, 'scope').name;
      const scope = typeof scopeName === 'string' ? scopeName : undefined;
      for (const span of jsonArray(ss.spans, 'spans')) spans.push(jsonSpan(jsonObject(span, 'span'), { resource, scope }));
    }
  }
  return spans;
}

function jsonSpan(span: Record<string, unknown>, where: SpanScope): ReceivedSpan {
  const status = span.status === undefined ? {} : jsonObject(span.status, 'status');
  return {
    serviceName: serviceNameOf(where.resource),
    resource: where.resource,
    scope: where.scope,
    traceId: jsonId(span.traceId, 'traceId'),
    spanId: jsonId(span.spanId, 'spanId'),
    parentSpanId: span.parentSpanId === undefined ? '' : jsonId(span.parentSpanId, 'parentSpanId'),
    name: typeof span.name === 'string' ? span.name : '',
    kind: jsonInt(span.kind),
    startTimeUnixNano: jsonNanos(span.startTimeUnixNano),
    endTimeUnixNano: jsonNanos(span.endTimeUnixNano),
    attributes: jsonAttributes(span.attributes),
    links: jsonArray(span.links, 'links').map((link) => {
      const l = jsonObject(link, 'link');
      return { traceId: jsonId(l.traceId, 'link.traceId'), spanId: jsonId(l.spanId, 'link.spanId'), attributes: jsonAttributes(l.attributes) };
    }),
    statusCode: jsonInt(status.code),
    statusMessage: typeof status.message === 'string' ? status.message : '',
    flags: jsonInt(span.flags),
  };
}

function jsonAttributes(value: unknown): OtlpAttributes {
  const attributes: Record<string, OtlpValue> = {};
  for (const entry of jsonArray(value, 'attributes')) {
    const kv = jsonObject(entry, 'attribute');
    if (typeof kv.key !== 'string') throw new OtlpDecodeError('bad OTLP JSON: attribute without a key');
    attributes[kv.key] = kv.value === undefined ? null : jsonAnyValue(jsonObject(kv.value, 'value'));
  }
  return attributes;
}

function jsonAnyValue(value: Record<string, unknown>): OtlpValue {
  if (typeof value.stringValue === 'string') return value.stringValue;
  if (typeof value.boolValue === 'boolean') return value.boolValue;
  if (value.intValue !== undefined) {
    if (typeof value.intValue === 'number' && Number.isInteger(value.intValue)) return value.intValue;
    if (typeof value.intValue === 'string' && /^-?\d+$/.test(value.intValue)) return narrowInt(BigInt(value.intValue));
    throw new OtlpDecodeError('bad OTLP JSON: intValue is not an integer');
  }
  if (value.doubleValue !== undefined) {
    const n = typeof value.doubleValue === 'string' ? Number(value.doubleValue) : value.doubleValue;
    if (typeof n !== 'number') throw new OtlpDecodeError('bad OTLP JSON: doubleValue is not a number');
    return n;
  }
  if (value.arrayValue !== undefined) {
    return jsonArray(jsonObject(value.arrayValue, 'arrayValue').values, 'values').map((item) => jsonAnyValue(jsonObject(item, 'value')));
  }
  if (value.kvlistValue !== undefined) return jsonAttributes(jsonObject(value.kvlistValue, 'kvlistValue').values);
  if (typeof value.bytesValue === 'string') return new Uint8Array(Buffer.from(value.bytesValue, 'base64'));
  return null;
}

function jsonObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new OtlpDecodeError(`bad OTLP JSON: ${what} is not an object`);
  return value as Record<string, unknown>;
}

function jsonArray(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new OtlpDecodeError(`bad OTLP JSON: ${what} is not an array`);
  return value;
}

function jsonId(value: unknown, what: string): string {
  // OTLP/JSON carries ids as hex; an empty string stands for "no id".
  if (typeof value !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(value)) throw new OtlpDecodeError(`bad OTLP JSON: ${what} is not hex`);
  return value.toLowerCase();
}

function jsonInt(value: unknown): number {
  if (value === undefined || value === null) return 0;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new OtlpDecodeError('bad OTLP JSON: expected an integer');
  return n;
}

function jsonNanos(value: unknown): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  throw new OtlpDecodeError('bad OTLP JSON: time is not an unsigned integer');
}

// ── shared ────────────────────────────────────────────────────────────────────────────────────────

function serviceNameOf(resource: OtlpAttributes): string | undefined {
  const name = resource['service.name'];
  return typeof name === 'string' ? name : undefined;
}

