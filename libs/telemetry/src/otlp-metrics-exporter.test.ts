import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { hrTime } from '@opentelemetry/core';
import type { HistogramMetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { DataPointType } from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.js';
import { initMetricsExport } from './metrics-export.js';
import { toResourceMetrics } from './registry-producer.js';
import { compareMetricsExport, decodeMetricsRequestProtobuf, OTLP_TEMPORALITY_CUMULATIVE, startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver, ReceivedMetric } from '@lockfabric/testkit';
import { MetricsExportError, startOtlpMetricsExporter } from './otlp-metrics-exporter.js';
import type { OtlpMetricsExporter, OtlpMetricsExporterOptions } from './otlp-metrics-exporter.js';
import { serviceResource } from './setup.js';

const WAIT_MS = 15_000;
/** Long enough that the periodic timer never fires during a test that does not want it. */
const NEVER_MS = 3_600_000;

function sampleRegistry() {
  const registry = new MetricsRegistry();
  const ops = registry.counter({ name: 'lockfabric_lock_operations_total', help: 'Lock operations.', labelNames: ['protocol', 'outcome'] });
  const members = registry.gauge({ name: 'lockfabric_coordinator_members', help: 'Members by state.', labelNames: ['state'] });
  const grant = registry.histogram({ name: 'lockfabric_lock_grant_seconds', help: 'Grant time.', labelNames: ['protocol'], buckets: [0.001, 0.01, 0.1] });
  const runs = registry.counter({ name: 'lockfabric_runs_total', help: 'Runs.' });
  // Labelled and never used: no series, so not exported.
  registry.counter({ name: 'lockfabric_unused_total', help: 'Unused.', labelNames: ['kind'] });
  ops.inc({ protocol: 'dslr', outcome: 'granted' }, 5);
  ops.inc({ protocol: 'caslock', outcome: 'timeout' });
  members.set({ state: 'alive' }, 3);
  members.set({ state: 'suspect' }, -0.5);
  for (const seconds of [0.0005, 0.005, 0.007, 0.05, 2]) grant.observe({ protocol: 'dslr' }, seconds);
  return { registry, ops, members, grant, runs };
}

/** The metrics of the latest export only (every export carries every metric that has series). */
function lastExport(metrics: readonly ReceivedMetric[], registry: MetricsRegistry): readonly ReceivedMetric[] {
  return metrics.slice(-registry.snapshot().filter((metric) => metric.series.length > 0).length);
}

/**
 * Starts exporters for one describe block with its defaults, collecting each one's failures;
 * `stopAll` shuts down what the test started (before its receiver closes, so final exports land).
 */
function exporterStarter(defaults: () => Omit<OtlpMetricsExporterOptions, 'registry'>) {
  const exporters: OtlpMetricsExporter[] = [];
  return {
    start(options: Partial<OtlpMetricsExporterOptions>): { exporter: OtlpMetricsExporter; failures: [MetricsExportError, number][] } {
      const failures: [MetricsExportError, number][] = [];
      const exporter = startOtlpMetricsExporter({
        registry: sampleRegistry().registry,
        onExportError: (error, consecutive) => failures.push([error, consecutive]),
        ...defaults(),
        ...options,
      });
      exporters.push(exporter);
      return { exporter, failures };
    },
    stopAll: () => Promise.all(exporters.splice(0).map((exporter) => exporter.shutdown())),
  };
}

describe('OTLP metrics exporter → in-process receiver', () => {
  let receiver: OtlpReceiver;
  const { start, stopAll } = exporterStarter(() => ({
    resource: serviceResource('lockfabric-memory-node', 'memory-node-7'),
    url: receiver.metricsUrl,
    intervalMs: NEVER_MS,
    timeoutMs: 5_000,
  }));
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await stopAll();
    await receiver.close();
  });

  it('delivers counters, gauges and histograms with their values, buckets, attributes and resource', async () => {
    const { registry } = sampleRegistry();
    const { exporter } = start({ registry });
    await exporter.flush();
    expect(exporter.stats()).toEqual({ exported: 1, failed: 0, inFlight: 0 });

    expect(receiver.metricRequests).toBe(1);
    expect(compareMetricsExport(registry.snapshot(), receiver.metrics)).toEqual([]);
    const byName = new Map(receiver.metrics.map((m) => [m.name, m]));
    const ops = byName.get('lockfabric_lock_operations_total');
    expect(ops).toMatchObject({ kind: 'sum', isMonotonic: true, temporality: OTLP_TEMPORALITY_CUMULATIVE, serviceName: 'lockfabric-memory-node', scope: '@lockfabric/telemetry' });
    expect(ops?.resource).toMatchObject({ 'service.namespace': 'lockfabric', 'service.instance.id': 'memory-node-7' });
    expect(ops?.kind === 'sum' && ops.points.map((p) => [p.attributes, p.value])).toEqual([
      [{ protocol: 'dslr', outcome: 'granted' }, 5],
      [{ protocol: 'caslock', outcome: 'timeout' }, 1],
    ]);
    const members = byName.get('lockfabric_coordinator_members');
    expect(members?.kind === 'gauge' && members.points.map((p) => [p.attributes, p.value])).toEqual([
      [{ state: 'alive' }, 3],
      [{ state: 'suspect' }, -0.5],
    ]);
    const grant = byName.get('lockfabric_lock_grant_seconds');
    expect(grant).toMatchObject({ kind: 'histogram', temporality: OTLP_TEMPORALITY_CUMULATIVE, description: 'Grant time.' });
    expect(grant?.kind === 'histogram' && grant.points).toMatchObject([
      { attributes: { protocol: 'dslr' }, explicitBounds: [0.001, 0.01, 0.1], bucketCounts: [1, 2, 1, 1], count: 5, sum: 0.0005 + 0.005 + 0.007 + 0.05 + 2 },
    ]);
    // A metric without labels is exported (as 0) before first use, as Prometheus shows it.
    expect(byName.get('lockfabric_runs_total')).toMatchObject({ kind: 'sum', points: [{ attributes: {}, value: 0 }] });
    expect(byName.has('lockfabric_unused_total')).toBe(false);
    const point = ops?.kind === 'sum' ? ops.points[0] : undefined;
    expect(point && point.timeUnixNano >= point.startTimeUnixNano && point.startTimeUnixNano > 0n).toBe(true);
  });

  it('exports cumulative totals: each export carries everything counted since the start', async () => {
    const { registry, ops, grant } = sampleRegistry();
    const { exporter } = start({ registry });
    await exporter.flush();
    ops.inc({ protocol: 'dslr', outcome: 'granted' }, 2);
    grant.observe({ protocol: 'dslr' }, 0.0001);
    await exporter.flush();
    const latest = lastExport(receiver.metrics, registry);
    expect(compareMetricsExport(registry.snapshot(), latest)).toEqual([]);
    const second = latest.find((m) => m.name === 'lockfabric_lock_operations_total');
    expect(second?.kind === 'sum' && second.points[0]?.value).toBe(7);
    const first = receiver.metrics.find((m) => m.name === 'lockfabric_lock_operations_total');
    // Both exports share the start time of cumulative counting.
    expect(first?.kind === 'sum' && second?.kind === 'sum' && first.points[0]?.startTimeUnixNano === second.points[0]?.startTimeUnixNano).toBe(true);
  });

  it('exports every interval, refreshing gauges through collect first', async () => {
    const { registry, members } = sampleRegistry();
    let collected = 0;
    start({
      registry,
      intervalMs: 50,
      collect: () => {
        collected++;
        members.set({ state: 'alive' }, collected);
      },
    });
    await receiver.waitForMetrics(() => receiver.metricRequests >= 2, WAIT_MS);
    const latest = lastExport(receiver.metrics, registry);
    const alive = latest.find((m) => m.name === 'lockfabric_coordinator_members');
    expect(alive?.kind === 'gauge' && Number(alive.points[0]?.value)).toBeGreaterThanOrEqual(2);
  });

  it('does a final export on shutdown, then stops', async () => {
    const { registry, ops } = sampleRegistry();
    const { exporter } = start({ registry });
    ops.inc({ protocol: 'dslr', outcome: 'granted' }, 10);
    const stopping = exporter.shutdown();
    expect(exporter.shutdown()).toBe(stopping);
    await stopping;
    expect(receiver.metricRequests).toBe(1);
    expect(compareMetricsExport(registry.snapshot(), receiver.metrics)).toEqual([]);
    await exporter.flush();
    expect(receiver.metricRequests).toBe(1);
  });

  it('initMetricsExport exports a registry under the service resource when the environment asks', async () => {
    const { registry } = sampleRegistry();
    const metricsExport = initMetricsExport({ registry, serviceName: 'lockfabric-coordinator', serviceInstanceId: 'coordinator-0', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } });
    expect(metricsExport.enabled).toBe(true);
    await metricsExport.shutdown();
    expect(compareMetricsExport(registry.snapshot(), receiver.metrics)).toEqual([]);
    expect(receiver.metrics[0]).toMatchObject({ serviceName: 'lockfabric-coordinator', resource: { 'service.instance.id': 'coordinator-0' } });
  });
});

describe('OTLP metrics export failures', () => {
  let receiver: OtlpReceiver;
  const { start, stopAll } = exporterStarter(() => ({ resource: serviceResource('svc', undefined), url: receiver.metricsUrl, intervalMs: NEVER_MS, timeoutMs: 10_000 }));
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await stopAll();
    await receiver.close();
  });

  it('drops and counts failed exports when the receiver is down, keeping at most one in flight', async () => {
    const url = receiver.metricsUrl;
    await receiver.close();
    // A refused connection is retryable, but the SDK's first backoff (about 1 s) does not fit in 200 ms.
    const { exporter, failures } = start({ url, timeoutMs: 200 });
    for (let i = 0; i < 20; i++) await exporter.flush();
    expect(exporter.stats()).toEqual({ exported: 0, failed: 20, inFlight: 0 });
    expect(failures.map(([, consecutive]) => consecutive)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(failures[0]?.[0]).toBeInstanceOf(MetricsExportError);
    expect(failures[0]?.[0].message).toMatch(/^OTLP metrics export to http:\/\/127\.0\.0\.1:\d+\/v1\/metrics failed: .*ECONNREFUSED/);

    // Flushes asked for at once share one export: nothing queues up however many come.
    const burst = Array.from({ length: 50 }, () => exporter.flush());
    expect(exporter.stats().inFlight).toBeLessThanOrEqual(1);
    await Promise.all(burst);
    expect(exporter.stats()).toEqual({ exported: 0, failed: 21, inFlight: 0 });
    await exporter.shutdown();
    expect(exporter.stats().failed).toBe(22);
  });

  it('retries retryable answers (at once when the collector says Retry-After: 0) a bounded number of times, not others', async () => {
    const { exporter, failures } = start({});
    receiver.scriptMetricAnswers([
      { status: 503, retryAfterSeconds: 0 },
      { status: 429, retryAfterSeconds: 0 },
    ]);
    await exporter.flush();
    expect(receiver.metricStatuses).toEqual([503, 429, 200]);
    expect(exporter.stats()).toMatchObject({ exported: 1, failed: 0 });

    // The SDK makes one attempt and at most five retries.
    receiver.scriptMetricAnswers(Array.from({ length: 6 }, () => ({ status: 503, retryAfterSeconds: 0 })));
    await exporter.flush();
    expect(receiver.metricStatuses.slice(3)).toEqual([503, 503, 503, 503, 503, 503]);
    expect(failures.at(-1)?.[0]).toMatchObject({ status: undefined, message: expect.stringMatching(/failed: Export failed with retryable status$/) as unknown });

    receiver.scriptMetricAnswers([{ status: 400 }]);
    await exporter.flush();
    expect(receiver.metricStatuses.slice(9)).toEqual([400]);
    expect(failures.at(-1)?.[0]).toMatchObject({ status: 400, message: expect.stringMatching(/got HTTP 400$/) as unknown });
    expect(exporter.stats()).toEqual({ exported: 1, failed: 2, inFlight: 0 });
    expect(receiver.metricRequests).toBe(1);
  });

  it('counts a throwing collect hook as a failed export, sending nothing', async () => {
    const { exporter, failures } = start({
      collect: () => {
        throw new Error('gauge source gone');
      },
    });
    await exporter.flush();
    expect(failures.map(([error, consecutive]) => [error.message, consecutive])).toEqual([['collecting metrics for OTLP export failed: gauge source gone', 1]]);
    expect(exporter.stats()).toEqual({ exported: 0, failed: 1, inFlight: 0 });
    expect(receiver.metricStatuses).toEqual([]);
  });

  it('gives up on a collector that never answers, and shutdown still exports once more after a hanging export', async () => {
    const { exporter, failures } = start({ timeoutMs: 300 });
    receiver.scriptMetricAnswers(['hang']);
    await exporter.flush();
    expect(failures.map(([error]) => error.message)).toEqual([expect.stringMatching(/failed: Request timed out$/)]);

    // SIGTERM while a periodic export hangs: shutdown waits for it (bounded by its timeout), then exports afresh.
    receiver.scriptMetricAnswers(['hang']);
    const pending = exporter.flush();
    while (exporter.stats().inFlight === 0) await new Promise((resolve) => setImmediate(resolve));
    await exporter.shutdown();
    await pending;
    // The hanging export timed out and was counted; the final one arrived.
    expect(exporter.stats()).toEqual({ exported: 1, failed: 2, inFlight: 0 });
    expect(receiver.metricRequests).toBe(1);
  });
});

describe('export comparison catches broken exports', () => {
  const { registry } = sampleRegistry();
  const snapshot = registry.snapshot();
  const resource = serviceResource('svc', undefined);
  /** Serializes (possibly mutated) SDK data the way the exporter does and decodes it as the receiver does. */
  const roundTrip = (mutate: (data: ResourceMetrics) => void): ReceivedMetric[] => {
    const data = toResourceMetrics(registry.snapshot(), { resource, startTime: hrTime(), time: hrTime() });
    mutate(data);
    const body = ProtobufMetricsSerializer.serializeRequest(data);
    if (!body) throw new Error('no body');
    return decodeMetricsRequestProtobuf(body);
  };
  const histogram = (data: ResourceMetrics) => data.scopeMetrics[0]?.metrics.find((m): m is HistogramMetricData => m.dataPointType === DataPointType.HISTOGRAM);

  it('accepts the faithful export', () => {
    expect(compareMetricsExport(snapshot, roundTrip(() => undefined))).toEqual([]);
  });

  it('rejects Prometheus-style running bucket totals in place of per-bucket counts', () => {
    const issues = compareMetricsExport(
      snapshot,
      roundTrip((data) => {
        const counts = histogram(data)?.dataPoints[0]?.value.buckets.counts ?? [];
        for (let i = 1; i < counts.length; i++) counts[i] = (counts[i] as number) + (counts[i - 1] as number);
      }),
    );
    expect(issues).toEqual(['lockfabric_lock_grant_seconds{"protocol":"dslr"}: bucket counts [1, 3, 4, 5], expected [1, 2, 1, 1]']);
  });

  it('rejects a dropped label, a wrong value, a delta temporality and a non-monotonic counter', () => {
    const issues = compareMetricsExport(
      snapshot,
      roundTrip((data) => {
        const metrics = data.scopeMetrics[0]?.metrics ?? [];
        const ops = metrics.find((m) => m.descriptor.name === 'lockfabric_lock_operations_total');
        if (ops?.dataPointType !== DataPointType.SUM) throw new Error('no sum');
        const first = ops.dataPoints[0];
        if (first) ops.dataPoints[0] = { ...first, attributes: { protocol: 'dslr' } };
        const gauge = metrics.find((m) => m.descriptor.name === 'lockfabric_coordinator_members');
        if (gauge?.dataPointType !== DataPointType.GAUGE) throw new Error('no gauge');
        const alive = gauge.dataPoints[0];
        if (alive) gauge.dataPoints[0] = { ...alive, value: 4 };
        const index = metrics.findIndex((m) => m.descriptor.name === 'lockfabric_runs_total');
        const runs = metrics[index];
        if (runs?.dataPointType !== DataPointType.SUM) throw new Error('no runs');
        metrics[index] = { ...runs, isMonotonic: false, aggregationTemporality: 0 };
      }),
    );
    expect(issues).toEqual([
      'lockfabric_lock_operations_total{"protocol":"dslr","outcome":"granted"}: no data point with exactly these attributes',
      'lockfabric_lock_operations_total: unexpected data point with attributes {"protocol":"dslr"}',
      'lockfabric_coordinator_members{"state":"alive"}: value 4, expected 3',
      'lockfabric_runs_total: sum is not monotonic',
      'lockfabric_runs_total: temporality 1, expected cumulative',
    ]);
  });

  it('rejects a missing metric, changed bounds and an extra metric', () => {
    const issues = compareMetricsExport(
      snapshot,
      roundTrip((data) => {
        const metrics = data.scopeMetrics[0]?.metrics ?? [];
        const h = histogram(data);
        const point = h?.dataPoints[0];
        if (point) point.value.buckets.boundaries = [0.001, 0.01, 1];
        const gaugeIndex = metrics.findIndex((m) => m.descriptor.name === 'lockfabric_coordinator_members');
        const [gauge] = metrics.splice(gaugeIndex, 1);
        if (gauge) metrics.push({ ...gauge, descriptor: { ...gauge.descriptor, name: 'lockfabric_other' } });
      }),
    );
    expect(issues).toEqual([
      'lockfabric_coordinator_members: missing',
      'lockfabric_lock_grant_seconds{"protocol":"dslr"}: bounds [0.001, 0.01, 1], expected [0.001, 0.01, 0.1]',
      'lockfabric_other: arrived but is not in the registry',
    ]);
  });
});
