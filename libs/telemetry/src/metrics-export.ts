import type { MetricsRegistry } from './metrics.js';
import { startOtlpMetricsExporter } from './otlp-metrics-exporter.js';
import type { MetricsExportError, OtlpMetricsExporter } from './otlp-metrics-exporter.js';
import { serviceResource } from './setup.js';
import { readMetricsExportEnv } from './telemetry-env.js';
import type { Env } from './telemetry-env.js';

export interface MetricsExportOptions {
  readonly registry: MetricsRegistry;
  readonly serviceName: string;
  readonly serviceInstanceId?: string;
  readonly env?: Env;
  /** Runs right before each snapshot, e.g. a service's `collectMetrics`. */
  readonly collect?: () => void;
  readonly onExportError?: (error: MetricsExportError, consecutiveFailures: number) => void;
}

export interface MetricsExport {
  readonly enabled: boolean;
  /** The running exporter when enabled. */
  readonly exporter: OtlpMetricsExporter | undefined;
  /** Final export and stop; a no-op when disabled. */
  shutdown(): Promise<void>;
}

const DISABLED_EXPORT: MetricsExport = { enabled: false, exporter: undefined, shutdown: () => Promise.resolve() };

/**
 * OTLP export of a service's metrics registry, on when the environment asks for it (see
 * `readMetricsExportEnv`), under the same resource its traces use. Throws a ConfigError on bad
 * settings.
 */
export function initMetricsExport(options: MetricsExportOptions): MetricsExport {
  const settings = readMetricsExportEnv(options.env ?? process.env);
  if (!settings.enabled) return DISABLED_EXPORT;
  const exporter = startOtlpMetricsExporter({
    registry: options.registry,
    resource: serviceResource(options.serviceName, options.serviceInstanceId),
    url: settings.metricsUrl,
    headers: settings.headers,
    intervalMs: settings.intervalMs,
    timeoutMs: settings.timeoutMs,
    ...(options.collect ? { collect: options.collect } : {}),
    ...(options.onExportError ? { onExportError: options.onExportError } : {}),
  });
  return { enabled: true, exporter, shutdown: () => exporter.shutdown() };
}
