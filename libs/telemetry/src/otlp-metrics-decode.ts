import { readKeyValueInto } from './otlp-decode-values.js';
import type { OtlpAttributes, OtlpValue } from './otlp-decode-values.js';
import { readOtlpExport } from './otlp-envelope.js';
import type { OtlpItemOrigin } from './otlp-envelope.js';
import type { Field, ProtobufReader } from './protobuf-reader.js';
import { WIRE_FIXED64, WIRE_LENGTH_DELIMITED, WIRE_VARINT } from './protobuf-reader.js';

/** OTLP AggregationTemporality: 0 unspecified, 1 delta, 2 cumulative. */
export const OTLP_TEMPORALITY_DELTA = 1;
export const OTLP_TEMPORALITY_CUMULATIVE = 2;

export interface ReceivedNumberPoint {
  readonly attributes: OtlpAttributes;
  readonly startTimeUnixNano: bigint;
  readonly timeUnixNano: bigint;
  /** `as_double` as a number, `as_int` as a number when exact, else bigint. */
  readonly value: number | bigint;
}

export interface ReceivedHistogramPoint {
  readonly attributes: OtlpAttributes;
  readonly startTimeUnixNano: bigint;
  readonly timeUnixNano: bigint;
  readonly count: number;
  readonly sum: number | undefined;
  /** Per-bucket counts, one more than `explicitBounds` (the last is above every bound). */
  readonly bucketCounts: readonly number[];
  readonly explicitBounds: readonly number[];
}

interface ReceivedMetricBase {
  /** `service.name` of the resource the metric was exported under. */
  readonly serviceName: string | undefined;
  readonly resource: OtlpAttributes;
  readonly scope: string | undefined;
  readonly name: string;
  readonly description: string;
  readonly unit: string;
}

export type ReceivedMetric =
  | (ReceivedMetricBase & { readonly kind: 'sum'; readonly temporality: number; readonly isMonotonic: boolean; readonly points: readonly ReceivedNumberPoint[] })
  | (ReceivedMetricBase & { readonly kind: 'gauge'; readonly points: readonly ReceivedNumberPoint[] })
  | (ReceivedMetricBase & { readonly kind: 'histogram'; readonly temporality: number; readonly points: readonly ReceivedHistogramPoint[] })
  /** Exponential histograms and summaries are recognised but not decoded. */
  | (ReceivedMetricBase & { readonly kind: 'other' });

/**
 * Decodes an OTLP/HTTP protobuf metrics export body
 * (opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest). Throws {@link OtlpDecodeError}.
 */
export function decodeMetricsRequestProtobuf(body: Uint8Array): ReceivedMetric[] {
  return readOtlpExport(body, 'metrics', readMetric);
}

function readMetric(reader: ProtobufReader, where: OtlpItemOrigin): ReceivedMetric {
  let name = '';
  let description = '';
  let unit = '';
  let data: DataBody = { kind: 'other' };
  while (!reader.done) {
    const field = reader.field();
    switch (field.number) {
      case 1:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        name = reader.string();
        break;
      case 2:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        description = reader.string();
        break;
      case 3:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        unit = reader.string();
        break;
      case 5:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        data = readNumberData(reader.message(), 'gauge');
        break;
      case 7:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        data = readNumberData(reader.message(), 'sum');
        break;
      case 9:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        data = readHistogramData(reader.message());
        break;
      default:
        reader.skip(field.wireType);
    }
  }
  const base: ReceivedMetricBase = { serviceName: where.serviceName, resource: where.resource, scope: where.scope, name, description, unit };
  return { ...base, ...data };
}

type DataBody =
  | { readonly kind: 'sum'; readonly temporality: number; readonly isMonotonic: boolean; readonly points: ReceivedNumberPoint[] }
  | { readonly kind: 'gauge'; readonly points: ReceivedNumberPoint[] }
  | { readonly kind: 'histogram'; readonly temporality: number; readonly points: ReceivedHistogramPoint[] }
  | { readonly kind: 'other' };

/** Gauge { 1 data_points } and Sum { 1 data_points, 2 aggregation_temporality, 3 is_monotonic }. */
function readNumberData(reader: ProtobufReader, kind: 'sum' | 'gauge'): DataBody {
  const points: ReceivedNumberPoint[] = [];
  let temporality = 0;
  let isMonotonic = false;
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      points.push(readNumberPoint(reader.message()));
    } else if (field.number === 2 && kind === 'sum') {
      reader.expect(field, WIRE_VARINT);
      temporality = reader.uint32();
    } else if (field.number === 3 && kind === 'sum') {
      reader.expect(field, WIRE_VARINT);
      isMonotonic = reader.varint() !== 0n;
    } else reader.skip(field.wireType);
  }
  return kind === 'sum' ? { kind, temporality, isMonotonic, points } : { kind, points };
}

function readHistogramData(reader: ProtobufReader): DataBody {
  const points: ReceivedHistogramPoint[] = [];
  let temporality = 0;
  while (!reader.done) {
    const field = reader.field();
    if (field.number === 1) {
      reader.expect(field, WIRE_LENGTH_DELIMITED);
      points.push(readHistogramPoint(reader.message()));
    } else if (field.number === 2) {
      reader.expect(field, WIRE_VARINT);
      temporality = reader.uint32();
    } else reader.skip(field.wireType);
  }
  return { kind: 'histogram', temporality, points };
}

function readNumberPoint(reader: ProtobufReader): ReceivedNumberPoint {
  const attributes: Record<string, OtlpValue> = {};
  let startTimeUnixNano = 0n;
  let timeUnixNano = 0n;
  let value: number | bigint = 0;
  while (!reader.done) {
    const field = reader.field();
    switch (field.number) {
      case 2:
        reader.expect(field, WIRE_FIXED64);
        startTimeUnixNano = reader.fixed64();
        break;
      case 3:
        reader.expect(field, WIRE_FIXED64);
        timeUnixNano = reader.fixed64();
        break;
      case 4:
        reader.expect(field, WIRE_FIXED64);
        value = reader.double();
        break;
      case 6: {
        reader.expect(field, WIRE_FIXED64);
        const int = BigInt.asIntN(64, reader.fixed64());
        value = Number.isSafeInteger(Number(int)) ? Number(int) : int;
        break;
      }
      case 7:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        readKeyValueInto(reader.message(), attributes);
        break;
      default:
        reader.skip(field.wireType);
    }
  }
  return { attributes, startTimeUnixNano, timeUnixNano, value };
}

function readHistogramPoint(reader: ProtobufReader): ReceivedHistogramPoint {
  const attributes: Record<string, OtlpValue> = {};
  let startTimeUnixNano = 0n;
  let timeUnixNano = 0n;
  let count = 0;
  let sum: number | undefined;
  const bucketCounts: number[] = [];
  const explicitBounds: number[] = [];
  while (!reader.done) {
    const field = reader.field();
    switch (field.number) {
      case 2:
        reader.expect(field, WIRE_FIXED64);
        startTimeUnixNano = reader.fixed64();
        break;
      case 3:
        reader.expect(field, WIRE_FIXED64);
        timeUnixNano = reader.fixed64();
        break;
      case 4:
        reader.expect(field, WIRE_FIXED64);
        count = Number(reader.fixed64());
        break;
      case 5:
        reader.expect(field, WIRE_FIXED64);
        sum = reader.double();
        break;
      case 6:
        readRepeated64(reader, field, () => bucketCounts.push(Number(reader.fixed64())), (packed) => bucketCounts.push(Number(packed.fixed64())));
        break;
      case 7:
        readRepeated64(reader, field, () => explicitBounds.push(reader.double()), (packed) => explicitBounds.push(packed.double()));
        break;
      case 9:
        reader.expect(field, WIRE_LENGTH_DELIMITED);
        readKeyValueInto(reader.message(), attributes);
        break;
      default:
        reader.skip(field.wireType);
    }
  }
  return { attributes, startTimeUnixNano, timeUnixNano, count, sum, bucketCounts, explicitBounds };
}

/** A repeated 64-bit fixed field, packed (one length-delimited run) or not (one value per tag). */
function readRepeated64(reader: ProtobufReader, field: Field, one: () => void, fromPacked: (packed: ProtobufReader) => void): void {
  if (field.wireType === WIRE_FIXED64) return one();
  reader.expect(field, WIRE_LENGTH_DELIMITED);
  const packed = reader.message();
  while (!packed.done) fromPacked(packed);
}
