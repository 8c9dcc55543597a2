export * from './semconv.js';
export { createOtelTrace, toRemoteSpanContext, fromSpanContext, isSampled } from './otel-trace.js';
export type { DeferUnsampled } from './otel-trace.js';
export { RecordAllSampler, lockFabricSampler, isTailCandidate } from './sampling.js';
export { TailKeepProcessor, tailVerdict, unsampledVerdict } from './tail-keep-processor.js';
export { PinnedIdGenerator, randomIdWords, ratioUpperBound, seededIdWords } from './span-ids.js';
export type { IdWords } from './span-ids.js';
export { exportedFields } from './exported-fields.js';
export type { TailRule, TailVerdict } from './tail-keep-processor.js';
export { readTelemetryEnv, readMetricsExportEnv, DEFAULT_METRIC_EXPORT_INTERVAL_MS, DEFAULT_OTLP_TIMEOUT_MS } from './telemetry-env.js';
export type { Env, TelemetryEnv, MetricsExportEnv } from './telemetry-env.js';
export {
  initTelemetry,
  createInMemoryTelemetry,
  TRACER_NAME,
  SERVICE_NAMESPACE,
  DEFAULT_TRACE_RATIO,
  DEFAULT_TRACE_SLOW_MS,
  serviceResource,
} from './setup.js';
export type { Telemetry, TelemetryOptions, InMemoryTelemetry, InMemoryTelemetryOptions } from './setup.js';
export { toResourceMetrics, RegistryProducer, METRICS_SCOPE_NAME } from './registry-producer.js';
export type { ToResourceMetricsOptions, RegistryProducerOptions } from './registry-producer.js';
export { createPrometheusMetrics, renderPrometheusText, PROMETHEUS_CONTENT_TYPE } from './prometheus-metrics.js';
export type { PrometheusMetrics, PrometheusMetricsOptions } from './prometheus-metrics.js';
export { startOtlpMetricsExporter, MetricsExportError, FINAL_EXPORT_TIMEOUT_MS } from './otlp-metrics-exporter.js';
export type { OtlpMetricsExporter, OtlpMetricsExporterOptions, MetricsExportStats } from './otlp-metrics-exporter.js';
export { initMetricsExport } from './metrics-export.js';
export type { MetricsExport, MetricsExportOptions } from './metrics-export.js';
export { MetricsRegistry, MetricsError } from './metrics.js';
export type {
  Counter,
  Gauge,
  Histogram,
  Labels,
  MetricOptions,
  HistogramOptions,
  MetricSnapshot,
  NumberSeriesSnapshot,
  HistogramSeriesSnapshot,
  SnapshotLabels,
} from './metrics.js';
export { TotalsCounter } from './totals-counter.js';
export { parsePrometheusText, sumSamples, PrometheusFormatError } from './prometheus-parse.js';
export type { PrometheusFamily, PrometheusSample, PrometheusType } from './prometheus-parse.js';

