import { ValueType } from '@opentelemetry/api';
import type { HrTime } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { emptyResource } from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import { AggregationTemporality, DataPointType } from '@opentelemetry/sdk-metrics';
import type { CollectionResult, MetricData, MetricProducer, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import type { MetricSnapshot, MetricsRegistry } from './metrics.js';

/** Instrumentation scope the registry's metrics are reported under. */
export const METRICS_SCOPE_NAME = '@lockfabric/telemetry';

export interface ToResourceMetricsOptions {
  readonly resource: Resource;
  /** When cumulative counting began, as the data points' start time. */
  readonly startTime: HrTime;
  /** When the snapshot was taken. */
  readonly time: HrTime;
  /**
   * Keep metrics that have no series yet (a labelled metric nobody used). Prometheus shows their
   * HELP and TYPE; over OTLP an empty metric is noise to a collector, so the push drops them.
   */
  readonly keepEmpty?: boolean;
}

/**
 * Maps a registry snapshot onto the SDK's metric data: counters become monotonic cumulative
 * sums, gauges gauges, histograms cumulative explicit-bucket histograms with the same bounds.
 * Labels become attributes in declared order. Values are doubles because the registry does not
 * distinguish integer metrics; the unit stays empty so no exporter derives a name suffix from it.
 */
export function toResourceMetrics(snapshot: readonly MetricSnapshot[], options: ToResourceMetricsOptions): ResourceMetrics {
  const point = <T>(labels: Readonly<Record<string, string>>, value: T) => ({
    startTime: options.startTime,
    endTime: options.time,
    attributes: { ...labels },
    value,
  });
  const kept = options.keepEmpty === true ? snapshot : snapshot.filter((metric) => metric.series.length > 0);
  const metrics = kept.map((metric): MetricData => {
    const common = {
      descriptor: { name: metric.name, description: metric.help, unit: '', valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
    };
    switch (metric.type) {
      case 'counter':
        return { ...common, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints: metric.series.map((s) => point(s.labels, s.value)) };
      case 'gauge':
        return { ...common, dataPointType: DataPointType.GAUGE, dataPoints: metric.series.map((s) => point(s.labels, s.value)) };
      case 'histogram':
        return {
          ...common,
          dataPointType: DataPointType.HISTOGRAM,
          // Per-bucket counts (like the registry's), not Prometheus' running `le` totals: exporters add them up.
          dataPoints: metric.series.map((s) =>
            point(s.labels, { buckets: { boundaries: [...metric.bounds], counts: [...s.counts] }, sum: s.sum, count: s.count }),
          ),
        };
    }
  });
  return { resource: options.resource, scopeMetrics: [{ scope: { name: METRICS_SCOPE_NAME }, metrics }] };
}

export interface RegistryProducerOptions {
  /** Runs right before each snapshot, e.g. a service's `collectMetrics` refreshing gauges. */
  readonly collect?: () => void;
  /** See {@link ToResourceMetricsOptions.keepEmpty}. */
  readonly keepEmpty?: boolean;
}

/**
 * The registry as an OpenTelemetry `MetricProducer`: the SDK's readers (the Prometheus exporter,
 * the periodic OTLP reader) pull a fresh cumulative snapshot from it on every collection, while
 * the hot path keeps updating the registry's plain numbers. The resource is the reader's
 * MeterProvider's (the SDK ignores a producer's own).
 */
export class RegistryProducer implements MetricProducer {
  /** Cumulative counting starts when the producer does: the series' start time. */
  private readonly startTime = millisToHrTime(Date.now());

  constructor(
    private readonly registry: MetricsRegistry,
    private readonly options: RegistryProducerOptions = {},
  ) {}

  /** A throwing `collect` hook rejects: the reader then has nothing of ours to serve or push this time. */
  collect(): Promise<CollectionResult> {
    return new Promise((resolve) => {
      this.options.collect?.();
      const resourceMetrics = toResourceMetrics(this.registry.snapshot(), {
        resource: emptyResource(),
        startTime: this.startTime,
        time: millisToHrTime(Date.now()),
        keepEmpty: this.options.keepEmpty ?? false,
      });
      resolve({ resourceMetrics, errors: [] });
    });
  }
}
