import { fromBinary } from '@bufbuild/protobuf';
import { ExportMetricsServiceRequestSchema } from './gen/opentelemetry/proto/collector/metrics/v1/metrics_service_pb.js';
import type { HistogramDataPoint, Metric, NumberDataPoint } from './gen/opentelemetry/proto/metrics/v1/metrics_pb.js';
import { attributesOf, decoding, narrowInt, originOf } from './values.js';
import type { OtlpAttributes, OtlpItemOrigin } from './values.js';

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

interface ReceivedMetricBase extends OtlpItemOrigin {
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
 * The metrics of an OTLP/HTTP protobuf metrics export body
 * (opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest). Throws `OtlpDecodeError`.
 */
export function decodeMetricsRequestProtobuf(body: Uint8Array): ReceivedMetric[] {
  const request = decoding('metrics protobuf', () => fromBinary(ExportMetricsServiceRequestSchema, body));
  return request.resourceMetrics.flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics.map((metric) => received(metric, originOf(rm.resource, sm.scope?.name)))));
}

function received(metric: Metric, origin: OtlpItemOrigin): ReceivedMetric {
  const base: ReceivedMetricBase = { ...origin, name: metric.name, description: metric.description, unit: metric.unit };
  const data = metric.data;
  switch (data.case) {
    case 'gauge':
      return { ...base, kind: 'gauge', points: data.value.dataPoints.map(numberPoint) };
    case 'sum':
      return { ...base, kind: 'sum', temporality: data.value.aggregationTemporality, isMonotonic: data.value.isMonotonic, points: data.value.dataPoints.map(numberPoint) };
    case 'histogram':
      return { ...base, kind: 'histogram', temporality: data.value.aggregationTemporality, points: data.value.dataPoints.map(histogramPoint) };
    default:
      return { ...base, kind: 'other' };
  }
}

function numberPoint(point: NumberDataPoint): ReceivedNumberPoint {
  const v = point.value;
  const value = v.case === 'asDouble' ? v.value : v.case === 'asInt' ? narrowInt(v.value) : 0;
  return { attributes: attributesOf(point.attributes), startTimeUnixNano: point.startTimeUnixNano, timeUnixNano: point.timeUnixNano, value };
}

function histogramPoint(point: HistogramDataPoint): ReceivedHistogramPoint {
  return {
    attributes: attributesOf(point.attributes),
    startTimeUnixNano: point.startTimeUnixNano,
    timeUnixNano: point.timeUnixNano,
    count: Number(point.count),
    sum: point.sum,
    bucketCounts: point.bucketCounts.map(Number),
    explicitBounds: [...point.explicitBounds],
  };
}
