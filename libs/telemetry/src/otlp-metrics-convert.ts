import { ValueType } from '@opentelemetry/api';
import type { HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import type { MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { MetricSnapshot } from './metrics.js';

/** Instrumentation scope the exported metrics are reported under. */
export const METRICS_SCOPE_NAME = '@lockfabric/telemetry';

export interface ToResourceMetricsOptions {
  readonly resource: Resource;
  /** When cumulative counting began (the exporter's start), as the data points' start time. */
  readonly startTime: HrTime;
  /** When the snapshot was taken. */
  readonly time: HrTime;
}

/**
 * Maps a registry snapshot onto the SDK's metric data so the OTLP transformer can serialize it:
 * counters become monotonic cumulative sums, gauges gauges, histograms cumulative explicit-bucket
 * histograms with the same bounds. Labels become attributes. Values are doubles because the
 * registry does not distinguish integer metrics.
 */
export function toResourceMetrics(snapshot: readonly MetricSnapshot[], options: ToResourceMetricsOptions): ResourceMetrics {
  const point = <T>(labels: Readonly<Record<string, string>>, value: T) => ({
    startTime: options.startTime,
    endTime: options.time,
    attributes: { ...labels },
    value,
  });
  // A labelled metric nobody has used yet has no series; an empty metric is noise to a collector.
  const metrics = snapshot.filter((metric) => metric.series.length > 0).map((metric): MetricData => {
    const descriptor = { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE };
    switch (metric.type) {
      case 'counter':
        return {
          descriptor,
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.SUM,
          isMonotonic: true,
          dataPoints: metric.series.map((s) => point(s.labels, s.value)),
        };
      case 'gauge':
        return {
          descriptor,
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.GAUGE,
          dataPoints: metric.series.map((s) => point(s.labels, s.value)),
        };
      case 'histogram':
        return {
          descriptor,
          aggregationTemporality: AggregationTemporality.CUMULATIVE,
          dataPointType: DataPointType.HISTOGRAM,
          // OTLP bucket counts are per bucket (like the registry's), not Prometheus' running `le` totals.
          dataPoints: metric.series.map((s) =>
            point(s.labels, { buckets: { boundaries: [...metric.bounds], counts: [...s.counts] }, sum: s.sum, count: s.count }),
          ),
        };
    }
  });
  return { resource: options.resource, scopeMetrics: [{ scope: { name: METRICS_SCOPE_NAME }, metrics }] };
}
