import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import type { ExporterConfig } from '@opentelemetry/exporter-prometheus';
import { emptyResource } from '@opentelemetry/resources';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { errorMessage } from '@lockfabric/ports';
import { MetricsError } from './metrics.js';
import type { MetricsRegistry } from './metrics.js';
import { RegistryProducer } from './registry-producer.js';

/** Content type of {@link PrometheusMetrics.render} output (Prometheus text exposition format 0.0.4). */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface PrometheusMetricsOptions {
  readonly registry: MetricsRegistry;
  /** Runs right before each scrape, e.g. a service's `collectMetrics` refreshing gauges. */
  readonly collect?: () => void;
  /** Test only: the exporter with its default options, to show the text comparison notices them. */
  readonly mutantExporterDefaults?: boolean;
}

export interface PrometheusMetrics {
  /** The registry in Prometheus text format 0.0.4, freshly collected. Rejects if `collect` throws. */
  render(): Promise<string>;
  /** Stops the reader; later renders reject. */
  shutdown(): Promise<void>;
}

/**
 * Exporter settings that keep the text exactly what the registry's names say: no `target_info`
 * family, no `otel_scope_*` labels on every sample, no timestamps. The registry refuses the names
 * the exporter would still rewrite (see `MetricsRegistry`).
 */
const EXPORTER_OPTIONS: ExporterOptions = { withoutTargetInfo: true, withoutScopeInfo: true, appendTimestamp: false };
type ExporterOptions = Pick<ExporterConfig, 'withoutTargetInfo' | 'withoutScopeInfo' | 'appendTimestamp'>;

/**
 * `/metrics` through the OpenTelemetry Prometheus exporter: a `PrometheusExporter` pulls the
 * registry as a MetricProducer and the exporter's serializer writes the exposition. The exporter's
 * own HTTP server stays off and its request handler unused: the service's health port serves the
 * text, so /healthz, /readyz and /metrics share a port, the content type keeps its version, and a
 * failed collection is a 500 rather than the handler's 200 with a comment.
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const settings: ExporterOptions = options.mutantExporterDefaults === true ? {} : EXPORTER_OPTIONS;
  const producer = new RegistryProducer(options.registry, { keepEmpty: true, ...(options.collect ? { collect: options.collect } : {}) });
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [producer], ...settings });
  // The reader collects only once a MeterProvider has bound it; nothing records through the provider.
  const provider = new MeterProvider({ resource: emptyResource(), readers: [exporter] });
  const serializer = new PrometheusSerializer(undefined, settings.appendTimestamp, undefined, settings.withoutTargetInfo, settings.withoutScopeInfo);
  return {
    async render() {
      const { resourceMetrics, errors } = await exporter.collect();
      if (errors.length > 0) throw new MetricsError(`collecting metrics failed: ${errors.map(errorMessage).join('; ')}`);
      return serializer.serialize(resourceMetrics);
    },
    shutdown: () => provider.shutdown(),
  };
}

/** One-off Prometheus text of a registry (tests, tools): collects once and stops. */
export async function renderPrometheusText(registry: MetricsRegistry): Promise<string> {
  const metrics = createPrometheusMetrics({ registry });
  try {
    return await metrics.render();
  } finally {
    await metrics.shutdown();
  }
}
