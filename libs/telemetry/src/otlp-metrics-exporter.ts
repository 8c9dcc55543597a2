import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import type { Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { PushMetricExporter, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { LockFabricError, errorMessage } from '@lockfabric/ports';
import type { MetricsRegistry } from './metrics.js';
import { RegistryProducer } from './registry-producer.js';

/** One OTLP metrics export failed (after the SDK's retries); its snapshot was dropped. */
export class MetricsExportError extends LockFabricError {
  readonly code = 'METRICS_EXPORT';
  constructor(
    message: string,
    /** HTTP status of a refused export, when the SDK reports it (not for retryable statuses it gave up on). */
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface OtlpMetricsExporterOptions {
  readonly registry: MetricsRegistry;
  readonly resource: Resource;
  /** Full OTLP/HTTP metrics URL (…/v1/metrics). */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Time between periodic exports. */
  readonly intervalMs: number;
  /** Limit for one export, its retries included. */
  readonly timeoutMs: number;
  /** Runs right before each snapshot, e.g. to refresh gauges as a scrape would. */
  readonly collect?: () => void;
  /** Told of each failed export, with how many exports in a row have failed. */
  readonly onExportError?: (error: MetricsExportError, consecutiveFailures: number) => void;
}

export interface MetricsExportStats {
  /** Exports the collector accepted. */
  readonly exported: number;
  /** Exports dropped: refused, unreachable collector, timed out, or a throwing `collect` hook. */
  readonly failed: number;
  /** Exports running now: never more than one, so nothing queues up. */
  readonly inFlight: number;
}

export interface OtlpMetricsExporter {
  /** Collects and exports now, after any export already running; resolves when that one is done. */
  flush(): Promise<void>;
  stats(): MetricsExportStats;
  /** Stops the timer and exports once more (bounded by {@link FINAL_EXPORT_TIMEOUT_MS}); later calls are no-ops. */
  shutdown(): Promise<void>;
}

/** How much longer the reader waits for an export than the exporter's own timeout allows it. */
const READER_GRACE_MS = 1_000;

/** The final export must fit in a service's drain, whatever the configured timeout. */
export const FINAL_EXPORT_TIMEOUT_MS = 5_000;

/**
 * Periodic OTLP/HTTP protobuf push of a {@link MetricsRegistry}, all SDK: a
 * `PeriodicExportingMetricReader` pulls the registry as a MetricProducer and hands each snapshot
 * to the SDK's `OTLPMetricExporter` (retries with backoff within the timeout). Every export is a
 * fresh cumulative snapshot, so a failed one is dropped: the next carries the same totals. The
 * reader never starts an export while one runs and the exporter admits one at a time, so a dead
 * collector costs no memory. Ours is only the counting of outcomes, read off the exporter's
 * result callback.
 */
export function startOtlpMetricsExporter(options: OtlpMetricsExporterOptions): OtlpMetricsExporter {
  if (!(Number.isInteger(options.intervalMs) && options.intervalMs > 0)) throw new RangeError(`intervalMs must be a positive integer, got ${options.intervalMs}`);
  if (!(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive integer, got ${options.timeoutMs}`);
  const counts = new ExportCounts(options.onExportError);
  const collect = options.collect;
  const producer = new RegistryProducer(options.registry, {
    ...(collect
      ? {
          collect: () => {
            try {
              collect();
            } catch (cause) {
              counts.failed(new MetricsExportError(`collecting metrics for OTLP export failed: ${errorMessage(cause)}`, undefined, { cause }));
              throw cause;
            }
          },
        }
      : {}),
  });
  const exporter = new OTLPMetricExporter({ url: options.url, headers: { ...options.headers }, timeoutMillis: options.timeoutMs, concurrencyLimit: 1 });
  const reader = new PeriodicExportingMetricReader({
    exporter: new CountingExporter(exporter, options.url, counts),
    exportIntervalMillis: options.intervalMs,
    // The exporter bounds each export by timeoutMs itself; the reader's own limit comes later so
    // that it never starts the next export while the exporter still holds the last (which would
    // be refused by the one-at-a-time limit). The SDK refuses a limit longer than the interval.
    exportTimeoutMillis: Math.min(options.timeoutMs + READER_GRACE_MS, options.intervalMs),
    metricProducers: [producer],
  });
  // Binding the reader to a provider starts its timer (unref'd: exporting never keeps a process alive).
  const provider = new MeterProvider({ resource: options.resource, readers: [reader] });
  let stopped: Promise<void> | undefined;
  return {
    flush: () => (stopped ? Promise.resolve() : reader.forceFlush()),
    stats: () => counts.stats(),
    shutdown() {
      // A timed-out final export is already counted when the exporter gives up on it.
      stopped ??= provider.shutdown({ timeoutMillis: FINAL_EXPORT_TIMEOUT_MS }).catch(() => undefined);
      return stopped;
    },
  };
}

/** Export outcomes and the run of failures the error callback is told about. */
class ExportCounts {
  private exported = 0;
  private failures = 0;
  private consecutive = 0;
  inFlight = 0;

  constructor(private readonly onExportError: OtlpMetricsExporterOptions['onExportError']) {}

  succeeded(): void {
    this.exported++;
    this.consecutive = 0;
  }

  failed(error: MetricsExportError): void {
    this.failures++;
    this.consecutive++;
    this.onExportError?.(error, this.consecutive);
  }

  stats(): MetricsExportStats {
    return { exported: this.exported, failed: this.failures, inFlight: this.inFlight };
  }
}

/** Passes exports through to the SDK exporter and counts what its result callback says. */
class CountingExporter implements PushMetricExporter {
  constructor(
    private readonly inner: PushMetricExporter,
    private readonly url: string,
    private readonly counts: ExportCounts,
  ) {}

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.counts.inFlight++;
    this.inner.export(metrics, (result) => {
      this.counts.inFlight--;
      if (result.code === ExportResultCode.SUCCESS) this.counts.succeeded();
      else this.counts.failed(exportError(this.url, result.error));
      resultCallback(result);
    });
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** The SDK's failure as ours: an HTTP status when the collector refused (OTLPExporterError.code), else the cause's message. */
function exportError(url: string, cause: Error | undefined): MetricsExportError {
  const status = cause !== undefined && 'code' in cause && typeof cause.code === 'number' ? cause.code : undefined;
  if (status !== undefined) return new MetricsExportError(`OTLP metrics export to ${url} got HTTP ${status}`, status, { cause });
  return new MetricsExportError(`OTLP metrics export to ${url} failed: ${cause ? errorMessage(cause) : 'no reason given'}`, undefined, { cause });
}
