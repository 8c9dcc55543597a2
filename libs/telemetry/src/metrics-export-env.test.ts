import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import { MetricsRegistry } from './metrics.js';
import { initMetricsExport } from './metrics-export.js';
import { DEFAULT_METRIC_EXPORT_INTERVAL_MS, DEFAULT_OTLP_TIMEOUT_MS, readMetricsExportEnv } from './telemetry-env.js';

function configIssues(env: Record<string, string>): readonly string[] {
  try {
    readMetricsExportEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('metrics export settings from the environment', () => {
  it('is off unless asked for', () => {
    expect(readMetricsExportEnv({}).enabled).toBe(false);
    expect(readMetricsExportEnv({ OTEL_METRIC_EXPORT_INTERVAL: '1000' }).enabled).toBe(false);
    expect(readMetricsExportEnv({ OTEL_TRACES_EXPORTER: 'otlp' }).enabled).toBe(false);
  });

  it('is on with an endpoint, a metrics endpoint, or OTEL_METRICS_EXPORTER=otlp, with standard defaults', () => {
    expect(readMetricsExportEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      enabled: true,
      metricsUrl: 'http://collector:4318/v1/metrics',
      headers: {},
      intervalMs: DEFAULT_METRIC_EXPORT_INTERVAL_MS,
      timeoutMs: DEFAULT_OTLP_TIMEOUT_MS,
    });
    expect(DEFAULT_METRIC_EXPORT_INTERVAL_MS).toBe(60_000);
    expect(
      readMetricsExportEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://base:4318', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:9090/custom' }).metricsUrl,
    ).toBe('http://m:9090/custom');
    expect(readMetricsExportEnv({ OTEL_METRICS_EXPORTER: 'prometheus, OTLP' })).toMatchObject({ enabled: true, metricsUrl: 'http://localhost:4318/v1/metrics' });
  });

  it('lets none, OTEL_SDK_DISABLED=true and an exporter list without otlp switch it off', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318' };
    expect(readMetricsExportEnv({ ...endpoint, OTEL_METRICS_EXPORTER: 'none' }).enabled).toBe(false);
    expect(readMetricsExportEnv({ ...endpoint, OTEL_SDK_DISABLED: 'True' }).enabled).toBe(false);
    expect(readMetricsExportEnv({ ...endpoint, OTEL_METRICS_EXPORTER: 'prometheus' }).enabled).toBe(false);
    // Traces being off does not turn metrics off.
    expect(readMetricsExportEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(true);
    // Settings of an exporter that is off are not read.
    expect(readMetricsExportEnv({ ...endpoint, OTEL_METRICS_EXPORTER: 'none', OTEL_METRIC_EXPORT_INTERVAL: 'soon' }).enabled).toBe(false);
  });

  it('reads interval, timeouts and headers, the metrics-specific ones winning', () => {
    expect(
      readMetricsExportEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318',
        OTEL_METRIC_EXPORT_INTERVAL: '250',
        OTEL_EXPORTER_OTLP_TIMEOUT: '3000',
        OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '1500',
        OTEL_EXPORTER_OTLP_HEADERS: 'a=1,b=2',
        OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'b=two%20words',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      }),
    ).toMatchObject({ intervalMs: 250, timeoutMs: 1500, headers: { a: '1', b: 'two words' } });
    expect(readMetricsExportEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_EXPORTER_OTLP_TIMEOUT: '3000' }).timeoutMs).toBe(3000);
  });

  it('names every bad value in one ConfigError', () => {
    const issues = configIssues({
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'collector:4318',
      OTEL_METRIC_EXPORT_INTERVAL: '1.5s',
      OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: '-3',
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: '=x',
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'grpc',
    });
    expect(issues).toEqual([
      "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: expected an http(s) URL, got 'collector:4318'",
      "OTEL_EXPORTER_OTLP_METRICS_HEADERS: expected key=value pairs, got '=x'",
      "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: only 'http/protobuf' is supported for metrics, got 'grpc'",
      "OTEL_METRIC_EXPORT_INTERVAL: expected a positive integer number of milliseconds, got '1.5s'",
      "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: expected a positive integer number of milliseconds, got '-3'",
    ]);
    expect(configIssues({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_METRIC_EXPORT_INTERVAL: '0' })).toEqual([
      "OTEL_METRIC_EXPORT_INTERVAL: expected a positive integer number of milliseconds, got '0'",
    ]);
    expect(configIssues({ OTEL_METRICS_EXPORTER: 'otlp,promethus' })[0]).toMatch(/OTEL_METRICS_EXPORTER: unknown exporter\(s\) 'promethus'/);
  });

  it('initMetricsExport is a no-op when off and starts an exporter when on', async () => {
    const registry = new MetricsRegistry();
    const off = initMetricsExport({ registry, serviceName: 'svc', env: {} });
    expect(off.enabled).toBe(false);
    expect(off.exporter).toBeUndefined();
    await off.shutdown();
    expect(() => initMetricsExport({ registry, serviceName: 'svc', env: { OTEL_METRICS_EXPORTER: 'otlp', OTEL_METRIC_EXPORT_INTERVAL: 'x' } })).toThrow(ConfigError);
  });
});
