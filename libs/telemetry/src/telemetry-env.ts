import { ConfigError } from '@lockfabric/ports';

export type Env = Readonly<Record<string, string | undefined>>;

/** What `initTelemetry` reads from the environment, validated. */
export interface TelemetryEnv {
  readonly enabled: boolean;
  /** Full OTLP/HTTP traces URL (…/v1/traces). */
  readonly tracesUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly exportTimeoutMs: number | undefined;
  readonly ratio: number | undefined;
  readonly slowMs: number | undefined;
  readonly batch: {
    readonly scheduledDelayMs: number | undefined;
    readonly maxQueueSize: number | undefined;
    readonly maxExportBatchSize: number | undefined;
    readonly exportTimeoutMs: number | undefined;
  };
}

const DEFAULT_OTLP_HTTP_ENDPOINT = 'http://localhost:4318';

const DISABLED: TelemetryEnv = {
  enabled: false,
  tracesUrl: `${DEFAULT_OTLP_HTTP_ENDPOINT}/v1/traces`,
  headers: {},
  exportTimeoutMs: undefined,
  ratio: undefined,
  slowMs: undefined,
  batch: { scheduledDelayMs: undefined, maxQueueSize: undefined, maxExportBatchSize: undefined, exportTimeoutMs: undefined },
};

/**
 * Reads the standard OTEL_* variables (and LockFabric's own) from `env` rather than from
 * `process.env`, so a service or a test can hand in exactly the environment it means. Invalid
 * values throw one {@link ConfigError} listing each, named by its variable.
 */
export function readTelemetryEnv(env: Env): TelemetryEnv {
  const issues: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const number = (name: string, check: (n: number) => boolean, expected: string): number | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw) || !check(value)) {
      issues.push(`${name}: expected ${expected}, got '${raw}'`);
      return undefined;
    }
    return value;
  };
  const positiveInt = (name: string) => number(name, (n) => Number.isInteger(n) && n > 0, 'a positive integer');
  const ratioCheck = (n: number) => n >= 0 && n <= 1;

  const exporters = (text('OTEL_TRACES_EXPORTER') ?? '').split(',').map((s) => s.trim().toLowerCase());
  const disabled = text('OTEL_SDK_DISABLED')?.toLowerCase() === 'true' || exporters.includes('none');
  const asked =
    text('OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined ||
    text('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined ||
    exporters.includes('otlp');

  const enabled = asked && !disabled;
  // Settings of a disabled exporter are not read: a typo there must not stop a service that does not trace.
  if (!enabled) return DISABLED;

  const tracesUrl = resolveTracesUrl(text('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'), text('OTEL_EXPORTER_OTLP_ENDPOINT'), issues);
  const headers = {
    ...parseHeaders('OTEL_EXPORTER_OTLP_HEADERS', text('OTEL_EXPORTER_OTLP_HEADERS'), issues),
    ...parseHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', text('OTEL_EXPORTER_OTLP_TRACES_HEADERS'), issues),
  };
  const exportTimeoutMs = positiveInt('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? positiveInt('OTEL_EXPORTER_OTLP_TIMEOUT');
  // LockFabric's own variable is the more specific one, so it wins over the OpenTelemetry one.
  const ratio =
    number('LOCKFABRIC_TRACE_RATIO', ratioCheck, 'a ratio between 0 and 1') ??
    number('OTEL_TRACES_SAMPLER_ARG', ratioCheck, 'a ratio between 0 and 1');
  const slowMs = number('LOCKFABRIC_TRACE_SLOW_MS', (n) => n >= 0 && Number.isFinite(n), 'a non-negative number of milliseconds');
  const batch = {
    scheduledDelayMs: positiveInt('OTEL_BSP_SCHEDULE_DELAY'),
    maxQueueSize: positiveInt('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: positiveInt('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
    exportTimeoutMs: positiveInt('OTEL_BSP_EXPORT_TIMEOUT'),
  };

  if (issues.length > 0) throw new ConfigError(issues);
  return { enabled: true, tracesUrl, headers, exportTimeoutMs, ratio, slowMs, batch };
}

function resolveTracesUrl(specific: string | undefined, base: string | undefined, issues: string[]): string {
  // The signal-specific endpoint is used as given; the base endpoint gets `/v1/traces` appended.
  if (specific !== undefined) {
    if (!isHttpUrl(specific)) issues.push(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: expected an http(s) URL, got '${specific}'`);
    return specific;
  }
  const root = base ?? DEFAULT_OTLP_HTTP_ENDPOINT;
  if (!isHttpUrl(root)) issues.push(`OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL, got '${root}'`);
  return `${root.replace(/\/+$/, '')}/v1/traces`;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `k1=v1,k2=v2` with percent-encoded values (W3C baggage-like), as the OTLP exporter spec says. */
function parseHeaders(name: string, raw: string | undefined, issues: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (raw === undefined) return headers;
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    const key = eq > 0 ? pair.slice(0, eq).trim() : '';
    if (key === '') {
      issues.push(`${name}: expected key=value pairs, got '${pair.trim()}'`);
      continue;
    }
    try {
      headers[key] = decodeURIComponent(pair.slice(eq + 1).trim());
    } catch {
      issues.push(`${name}: header ${key} has a malformed percent-encoding`);
    }
  }
  return headers;
}

/** What the OTLP metrics exporter reads from the environment, validated. */
export interface MetricsExportEnv {
  readonly enabled: boolean;
  /** Full OTLP/HTTP metrics URL (…/v1/metrics). */
  readonly metricsUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Time between exports (OTEL_METRIC_EXPORT_INTERVAL). */
  readonly intervalMs: number;
  /** Limit for one POST (OTEL_EXPORTER_OTLP_METRICS_TIMEOUT, then OTEL_EXPORTER_OTLP_TIMEOUT). */
  readonly timeoutMs: number;
}

/** The OpenTelemetry SDK defaults for the periodic reader and the OTLP exporter. */
export const DEFAULT_METRIC_EXPORT_INTERVAL_MS = 60_000;
export const DEFAULT_OTLP_TIMEOUT_MS = 10_000;

const KNOWN_METRICS_EXPORTERS = ['otlp', 'prometheus', 'console', 'none'];

const METRICS_DISABLED: MetricsExportEnv = {
  enabled: false,
  metricsUrl: `${DEFAULT_OTLP_HTTP_ENDPOINT}/v1/metrics`,
  headers: {},
  intervalMs: DEFAULT_METRIC_EXPORT_INTERVAL_MS,
  timeoutMs: DEFAULT_OTLP_TIMEOUT_MS,
};

/**
 * Reads the standard OTEL_* variables for metrics export. On when OTEL_METRICS_EXPORTER lists
 * `otlp` or an OTLP endpoint (general or metrics) is set; OTEL_METRICS_EXPORTER=none and
 * OTEL_SDK_DISABLED=true win. Prometheus text is served either way, so `prometheus` in the list
 * only means "no OTLP" unless `otlp` is there too. Invalid values throw one {@link ConfigError}.
 */
export function readMetricsExportEnv(env: Env): MetricsExportEnv {
  const issues: string[] = [];
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const positiveInt = (name: string): number | undefined => {
    const raw = text(name);
    if (raw === undefined) return undefined;
    if (!/^\+?\d+$/.test(raw) || !(Number(raw) > 0) || !Number.isSafeInteger(Number(raw))) {
      issues.push(`${name}: expected a positive integer number of milliseconds, got '${raw}'`);
      return undefined;
    }
    return Number(raw);
  };

  const exportersRaw = text('OTEL_METRICS_EXPORTER');
  const exporters = (exportersRaw ?? '').split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  const disabled = exporters.includes('none');
  const asked =
    text('OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined ||
    text('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT') !== undefined ||
    exporters.includes('otlp');
  // An explicit exporter list without `otlp` (e.g. `prometheus`) keeps OTLP off even with an endpoint set for traces.
  const listedWithoutOtlp = exportersRaw !== undefined && !exporters.includes('otlp');
  const sdkDisabled = text('OTEL_SDK_DISABLED')?.toLowerCase() === 'true';
  const unknown = exporters.filter((name) => !KNOWN_METRICS_EXPORTERS.includes(name));
  // A misspelt exporter list is the on/off switch itself, so it is an error rather than "off".
  if (!sdkDisabled && unknown.length > 0) {
    throw new ConfigError([`OTEL_METRICS_EXPORTER: unknown exporter(s) '${unknown.join(', ')}'; expected a list of ${KNOWN_METRICS_EXPORTERS.join(', ')}`]);
  }
  if (sdkDisabled || !asked || disabled || listedWithoutOtlp) return METRICS_DISABLED;

  const metricsUrl = resolveSignalUrl('METRICS', 'metrics', text('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'), text('OTEL_EXPORTER_OTLP_ENDPOINT'), issues);
  const headers = {
    ...parseHeaders('OTEL_EXPORTER_OTLP_HEADERS', text('OTEL_EXPORTER_OTLP_HEADERS'), issues),
    ...parseHeaders('OTEL_EXPORTER_OTLP_METRICS_HEADERS', text('OTEL_EXPORTER_OTLP_METRICS_HEADERS'), issues),
  };
  const protocolName = text('OTEL_EXPORTER_OTLP_METRICS_PROTOCOL') !== undefined ? 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = text(protocolName);
  // Only OTLP/HTTP protobuf is implemented; saying so beats posting protobuf to a gRPC port.
  if (protocol !== undefined && protocol !== 'http/protobuf') issues.push(`${protocolName}: only 'http/protobuf' is supported for metrics, got '${protocol}'`);
  const intervalMs = positiveInt('OTEL_METRIC_EXPORT_INTERVAL') ?? DEFAULT_METRIC_EXPORT_INTERVAL_MS;
  const timeoutMs = positiveInt('OTEL_EXPORTER_OTLP_METRICS_TIMEOUT') ?? positiveInt('OTEL_EXPORTER_OTLP_TIMEOUT') ?? DEFAULT_OTLP_TIMEOUT_MS;

  if (issues.length > 0) throw new ConfigError(issues);
  return { enabled: true, metricsUrl, headers, intervalMs, timeoutMs };
}

function resolveSignalUrl(signalVar: string, path: string, specific: string | undefined, base: string | undefined, issues: string[]): string {
  if (specific !== undefined) {
    if (!isHttpUrl(specific)) issues.push(`OTEL_EXPORTER_OTLP_${signalVar}_ENDPOINT: expected an http(s) URL, got '${specific}'`);
    return specific;
  }
  const root = base ?? DEFAULT_OTLP_HTTP_ENDPOINT;
  if (!isHttpUrl(root)) issues.push(`OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL, got '${root}'`);
  return `${root.replace(/\/+$/, '')}/v1/${path}`;
}
