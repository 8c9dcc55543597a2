import { describe, expect, it } from 'vitest';
import { ConfigError, noopTrace } from '@lockfabric/ports';
import { readTelemetryEnv } from './telemetry-env.js';
import { initTelemetry } from './setup.js';

describe('telemetry settings from the environment', () => {
  it('is off unless asked for', () => {
    expect(readTelemetryEnv({}).enabled).toBe(false);
    expect(readTelemetryEnv({ LOCKFABRIC_TRACE_RATIO: '0.5' }).enabled).toBe(false);
  });

  it('is on with an endpoint, a traces endpoint, or OTEL_TRACES_EXPORTER=otlp', () => {
    expect(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318' })).toMatchObject({
      enabled: true,
      tracesUrl: 'http://jaeger:4318/v1/traces',
    });
    expect(readTelemetryEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom' })).toMatchObject({
      enabled: true,
      tracesUrl: 'http://collector:4318/custom',
    });
    expect(readTelemetryEnv({ OTEL_TRACES_EXPORTER: 'console, otlp' })).toMatchObject({
      enabled: true,
      tracesUrl: 'http://localhost:4318/v1/traces',
    });
  });

  it('lets OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none win', () => {
    expect(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_SDK_DISABLED: 'TRUE' }).enabled).toBe(false);
    expect(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(false);
    expect(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_SDK_DISABLED: 'false' }).enabled).toBe(true);
  });

  it('reads headers, timeouts, sampling and batching', () => {
    const settings = readTelemetryEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318/',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=1, b=two%20words',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'b=3',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      LOCKFABRIC_TRACE_SLOW_MS: '2.5',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    expect(settings).toMatchObject({
      tracesUrl: 'http://x:4318/v1/traces',
      headers: { a: '1', b: '3' },
      exportTimeoutMs: 2500,
      ratio: 0.25,
      slowMs: 2.5,
      batch: { scheduledDelayMs: 100 },
    });
    expect(readTelemetryEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER_ARG: '0.25', LOCKFABRIC_TRACE_RATIO: '0.75' }).ratio).toBe(0.75);
  });

  it('rejects every invalid value at once, naming its variable', () => {
    let caught: unknown;
    try {
      readTelemetryEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'jaeger:4318',
        LOCKFABRIC_TRACE_RATIO: '1.5',
        LOCKFABRIC_TRACE_SLOW_MS: 'abc',
        OTEL_EXPORTER_OTLP_HEADERS: 'novalue',
        OTEL_BSP_MAX_QUEUE_SIZE: '0',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues).toEqual([
      "OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL, got 'jaeger:4318'",
      "OTEL_EXPORTER_OTLP_HEADERS: expected key=value pairs, got 'novalue'",
      "LOCKFABRIC_TRACE_RATIO: expected a ratio between 0 and 1, got '1.5'",
      "LOCKFABRIC_TRACE_SLOW_MS: expected a non-negative number of milliseconds, got 'abc'",
      "OTEL_BSP_MAX_QUEUE_SIZE: expected a positive integer, got '0'",
    ]);
  });

  it('does not read the settings of a disabled exporter', () => {
    expect(readTelemetryEnv({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'x', LOCKFABRIC_TRACE_RATIO: 'x' }).enabled).toBe(false);
  });

  it('initTelemetry returns the no-op trace when off', async () => {
    const telemetry = initTelemetry({ serviceName: 'memory-node', env: {} });
    expect(telemetry.enabled).toBe(false);
    expect(telemetry.trace).toBe(noopTrace);
    await telemetry.shutdown();
  });

  it('initTelemetry rejects an out-of-range ratio option', () => {
    expect(() => initTelemetry({ serviceName: 's', env: { OTEL_TRACES_EXPORTER: 'otlp' }, ratio: 2 })).toThrow(ConfigError);
  });
});
