import { millisToHrTime } from '@opentelemetry/core';
import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import type { Resource } from '@opentelemetry/resources';
import { LockFabricError, errorMessage } from '@lockfabric/ports';
import type { MetricsRegistry } from './metrics.js';
import { toResourceMetrics } from './registry-producer.js';

/** One OTLP metrics export failed after its attempts; the snapshot was dropped. */
export class MetricsExportError extends LockFabricError {
  readonly code = 'METRICS_EXPORT';
  constructor(
    message: string,
    /** HTTP status of the last attempt, if the collector answered. */
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
  /** Limit for one POST attempt. */
  readonly timeoutMs: number;
  /** Attempts per export, the first included (default 3). */
  readonly maxAttempts?: number;
  /** Wait before the first retry, doubled for each later one (default 250). */
  readonly retryDelayMs?: number;
  /** Runs right before each snapshot, e.g. to refresh gauges as a scrape would. */
  readonly collect?: () => void;
  /** Told of each failed export, with how many exports in a row have failed. */
  readonly onExportError?: (error: MetricsExportError, consecutiveFailures: number) => void;
  /** For tests; the global `fetch` by default. */
  readonly fetch?: typeof fetch;
}

export interface MetricsExportStats {
  /** Exports the collector accepted. */
  readonly exported: number;
  /** Exports dropped after their attempts failed. */
  readonly failed: number;
  /** Periodic ticks skipped because the previous export was still running. */
  readonly skipped: number;
  /** Exports running now: never more than one, so nothing queues up. */
  readonly inFlight: number;
}

export interface OtlpMetricsExporter {
  /** Snapshots and exports now; resolves true when accepted. Skips (false) while another export runs. */
  exportNow(): Promise<boolean>;
  stats(): MetricsExportStats;
  /** Stops the timer, cuts short a running export, then exports once more; later calls are no-ops. */
  shutdown(): Promise<void>;
}

const DEFAULT_MAX_ATTEMPTS = 3;
const DEFAULT_RETRY_DELAY_MS = 250;
/** The final export must fit in a service's drain, whatever the configured timeout. */
const FINAL_EXPORT_TIMEOUT_MS = 5_000;
/** Statuses the OTLP/HTTP spec calls retryable. */
const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/**
 * Periodically exports a {@link MetricsRegistry} as OTLP/HTTP protobuf. Each export is a fresh
 * cumulative snapshot, so a failed one is simply dropped (and counted): the next carries the same
 * totals. At most one export runs at a time and none queue, so a dead collector costs no memory.
 */
export function startOtlpMetricsExporter(options: OtlpMetricsExporterOptions): OtlpMetricsExporter {
  if (!(Number.isInteger(options.intervalMs) && options.intervalMs > 0)) throw new RangeError(`intervalMs must be a positive integer, got ${options.intervalMs}`);
  if (!(Number.isInteger(options.timeoutMs) && options.timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive integer, got ${options.timeoutMs}`);
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (!(Number.isInteger(maxAttempts) && maxAttempts >= 1)) throw new RangeError(`maxAttempts must be an integer >= 1, got ${maxAttempts}`);
  const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  const post = options.fetch ?? fetch;
  const startTime = millisToHrTime(Date.now());
  const headers = { ...options.headers, 'content-type': 'application/x-protobuf' };

  let exported = 0;
  let failed = 0;
  let skipped = 0;
  let consecutiveFailures = 0;
  let running: Promise<boolean> | undefined;
  // Aborted on shutdown: cuts short the periodic export running then (the final one carries its data).
  const halt = new AbortController();
  let stopped: Promise<void> | undefined;

  const attempt = async (body: Uint8Array, timeoutMs: number, stop: AbortSignal | undefined): Promise<AttemptResult> => {
    const signal = stop ? AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    try {
      const response = await post(options.url, { method: 'POST', headers, body, signal });
      // Read the body so the connection is released (and a partial-success answer is consumed).
      await response.arrayBuffer().catch(() => undefined);
      if (response.ok) return { ok: true };
      return {
        ok: false,
        retry: RETRYABLE_STATUS.has(response.status),
        error: new MetricsExportError(`OTLP metrics export to ${options.url} got HTTP ${response.status}`, response.status),
      };
    } catch (cause) {
      const timedOut = cause instanceof Error && cause.name === 'TimeoutError';
      const reason = timedOut ? `timed out after ${timeoutMs} ms` : errorMessage(cause);
      return { ok: false, retry: true, error: new MetricsExportError(`OTLP metrics export to ${options.url} failed: ${reason}`, undefined, { cause }) };
    }
  };

  const exportOnce = async (attempts: number, timeoutMs: number, stop: AbortSignal | undefined): Promise<boolean> => {
    let body: Uint8Array | undefined;
    let last: MetricsExportError | undefined;
    try {
      options.collect?.();
      const request = toResourceMetrics(options.registry.snapshot(), { resource: options.resource, startTime, time: millisToHrTime(Date.now()) });
      body = ProtobufMetricsSerializer.serializeRequest(request);
      if (body === undefined) last = new MetricsExportError('OTLP metrics serializer produced no body', undefined);
    } catch (cause) {
      // A throwing collect hook must not become an unhandled rejection from the timer.
      last = new MetricsExportError(`collecting metrics for OTLP export failed: ${errorMessage(cause)}`, undefined, { cause });
    }
    for (let i = 0; body !== undefined && i < attempts; i++) {
      if (i > 0) await delay(retryDelayMs * 2 ** (i - 1), stop);
      if (stop?.aborted) break;
      const result = await attempt(body, timeoutMs, stop);
      if (result.ok) {
        exported++;
        consecutiveFailures = 0;
        return true;
      }
      last = result.error;
      if (!result.retry) break;
    }
    failed++;
    consecutiveFailures++;
    options.onExportError?.(last ?? new MetricsExportError('OTLP metrics export failed', undefined), consecutiveFailures);
    return false;
  };

  const run = (attempts: number, timeoutMs: number, stop: AbortSignal | undefined): Promise<boolean> => {
    if (running) {
      skipped++;
      return Promise.resolve(false);
    }
    const current = exportOnce(attempts, timeoutMs, stop).finally(() => {
      running = undefined;
    });
    running = current;
    return current;
  };

  const timer = setInterval(() => void run(maxAttempts, options.timeoutMs, halt.signal), options.intervalMs);
  // Exporting must never keep a process alive on its own.
  timer.unref();

  return {
    exportNow: () => (stopped ? Promise.resolve(false) : run(maxAttempts, options.timeoutMs, halt.signal)),
    stats: () => ({ exported, failed, skipped, inFlight: running ? 1 : 0 }),
    shutdown() {
      stopped ??= (async () => {
        clearInterval(timer);
        halt.abort();
        await running;
        await run(1, Math.min(options.timeoutMs, FINAL_EXPORT_TIMEOUT_MS), undefined);
      })();
      return stopped;
    },
  };
}

type AttemptResult = { readonly ok: true } | { readonly ok: false; readonly retry: boolean; readonly error: MetricsExportError };

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
