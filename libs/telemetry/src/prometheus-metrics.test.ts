import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { hrTime } from '@opentelemetry/core';
import { emptyResource } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { MetricsError, MetricsRegistry } from './metrics.js';
import { createPrometheusMetrics, renderPrometheusText } from './prometheus-metrics.js';
import type { PrometheusMetricsOptions } from './prometheus-metrics.js';
import { parsePrometheusText } from './prometheus-parse.js';
import { toResourceMetrics } from './registry-producer.js';

/** Every metric kind, labelled and not, used and not, with values and labels that need care in text. */
function everyKind(): MetricsRegistry {
  const registry = new MetricsRegistry();
  const verbs = registry.counter({ name: 'lockfabric_nic_verbs_total', help: 'Verbs served by the NIC.', labelNames: ['op', 'node'] });
  const runs = registry.counter({ name: 'lockfabric_runs_total', help: 'Runs completed' });
  registry.counter({ name: 'lockfabric_rejoins_total', help: 'Never used, no labels: shown as 0' });
  registry.counter({ name: 'lockfabric_unused_total', help: 'Never used: HELP and TYPE only', labelNames: ['kind'] });
  const up = registry.gauge({ name: 'lockfabric_up', help: 'Line one\nback\\slash "quoted"' });
  const members = registry.gauge({ name: 'lockfabric_members', help: 'Members by state', labelNames: ['state'] });
  const grant = registry.histogram({ name: 'lockfabric_acquire_grant_seconds', help: 'Grant time.', labelNames: ['protocol'], buckets: [0.001, 0.01, 0.1] });
  registry.histogram({ name: 'lockfabric_verbs_per_acquire', help: 'Verbs per acquire', buckets: [0, 1, 2] });
  verbs.inc({ op: 'cas', node: 1 });
  verbs.inc({ op: 'cas', node: 1 }, 2);
  verbs.inc({ node: 2, op: 'read "x"\\\n' });
  runs.inc(undefined, 1e21);
  up.set(undefined, 1);
  members.set({ state: 'alive' }, 3);
  members.dec({ state: 'suspect' }, 0.5);
  members.set({ state: 'lost' }, Number.NaN);
  members.set({ state: 'unbounded' }, Number.NEGATIVE_INFINITY);
  members.set({ state: 'above' }, Number.POSITIVE_INFINITY);
  for (const seconds of [0.0005, 0.001, 0.01, 5]) grant.observe({ protocol: 'dslr' }, seconds);
  grant.observe({ protocol: 'a\\b' }, 0.05);
  return registry;
}

/**
 * What `MetricsRegistry.render()`, the hand-written renderer the exporter replaced, produced for
 * `everyKind()` (captured from it before its removal): the text operators' scrapes and the e2e
 * tests were written against.
 */
const REGISTRY_RENDER = [
  '# HELP lockfabric_nic_verbs_total Verbs served by the NIC.',
  '# TYPE lockfabric_nic_verbs_total counter',
  'lockfabric_nic_verbs_total{op="cas",node="1"} 3',
  'lockfabric_nic_verbs_total{op="read \\"x\\"\\\\\\n",node="2"} 1',
  '# HELP lockfabric_runs_total Runs completed',
  '# TYPE lockfabric_runs_total counter',
  'lockfabric_runs_total 1e+21',
  '# HELP lockfabric_rejoins_total Never used, no labels: shown as 0',
  '# TYPE lockfabric_rejoins_total counter',
  'lockfabric_rejoins_total 0',
  '# HELP lockfabric_unused_total Never used: HELP and TYPE only',
  '# TYPE lockfabric_unused_total counter',
  '# HELP lockfabric_up Line one\\nback\\\\slash "quoted"',
  '# TYPE lockfabric_up gauge',
  'lockfabric_up 1',
  '# HELP lockfabric_members Members by state',
  '# TYPE lockfabric_members gauge',
  'lockfabric_members{state="alive"} 3',
  'lockfabric_members{state="suspect"} -0.5',
  'lockfabric_members{state="lost"} NaN',
  'lockfabric_members{state="unbounded"} -Inf',
  'lockfabric_members{state="above"} +Inf',
  '# HELP lockfabric_acquire_grant_seconds Grant time.',
  '# TYPE lockfabric_acquire_grant_seconds histogram',
  'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="0.001"} 2',
  'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="0.01"} 3',
  'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="0.1"} 3',
  'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="+Inf"} 4',
  'lockfabric_acquire_grant_seconds_sum{protocol="dslr"} 5.0115',
  'lockfabric_acquire_grant_seconds_count{protocol="dslr"} 4',
  'lockfabric_acquire_grant_seconds_bucket{protocol="a\\\\b",le="0.001"} 0',
  'lockfabric_acquire_grant_seconds_bucket{protocol="a\\\\b",le="0.01"} 0',
  'lockfabric_acquire_grant_seconds_bucket{protocol="a\\\\b",le="0.1"} 1',
  'lockfabric_acquire_grant_seconds_bucket{protocol="a\\\\b",le="+Inf"} 1',
  'lockfabric_acquire_grant_seconds_sum{protocol="a\\\\b"} 0.05',
  'lockfabric_acquire_grant_seconds_count{protocol="a\\\\b"} 1',
  '# HELP lockfabric_verbs_per_acquire Verbs per acquire',
  '# TYPE lockfabric_verbs_per_acquire histogram',
  'lockfabric_verbs_per_acquire_bucket{le="0"} 0',
  'lockfabric_verbs_per_acquire_bucket{le="1"} 0',
  'lockfabric_verbs_per_acquire_bucket{le="2"} 0',
  'lockfabric_verbs_per_acquire_bucket{le="+Inf"} 0',
  'lockfabric_verbs_per_acquire_sum 0',
  'lockfabric_verbs_per_acquire_count 0',
  '',
].join('\n');

/** Families with their HELP, TYPE and every sample's name, labels and value, in a comparable form. */
function series(text: string): unknown[] {
  return [...parsePrometheusText(text).values()].map((family) => ({
    name: family.name,
    type: family.type,
    help: family.help,
    samples: family.samples.map((s) => `${s.name}${JSON.stringify(s.labels)} ${String(s.value)}`).sort(),
  }));
}

/** The lines of a family block that are not samples, and every sample line, regardless of order within a family. */
function lines(text: string): string[] {
  return text.split('\n').sort();
}

async function scrape(registry: MetricsRegistry, options: Omit<PrometheusMetricsOptions, 'registry'> = {}): Promise<string> {
  const metrics = createPrometheusMetrics({ registry, ...options });
  try {
    return await metrics.render();
  } finally {
    await metrics.shutdown();
  }
}

describe('/metrics through the OpenTelemetry Prometheus exporter', () => {
  it('serves the same families, HELP, TYPE, series names, labels and values as the registry rendered', async () => {
    const text = await renderPrometheusText(everyKind());
    expect(series(text)).toEqual(series(REGISTRY_RENDER));
    // Line for line the same text too; only the order of a histogram's samples may differ.
    expect(lines(text)).toEqual(lines(REGISTRY_RENDER));
    expect([...parsePrometheusText(text).keys()]).toEqual([...parsePrometheusText(REGISTRY_RENDER).keys()]);
  });

  it('the comparison catches the exporter with its default options (target_info, scope labels)', async () => {
    const text = await scrape(everyKind(), { mutantExporterDefaults: true });
    expect(series(text)).not.toEqual(series(REGISTRY_RENDER));
    expect(text).toMatch(/^# HELP target_info /m);
    expect(text).toMatch(/^lockfabric_up\{otel_scope_name="@lockfabric\/telemetry"\} 1$/m);
  });

  it('runs the collect hook before every scrape, and a throwing hook fails the scrape', async () => {
    const registry = new MetricsRegistry();
    const gauge = registry.gauge({ name: 'refreshed', help: 'Set by collect' });
    let calls = 0;
    const metrics = createPrometheusMetrics({ registry, collect: () => gauge.set(undefined, ++calls) });
    expect(await metrics.render()).toContain('refreshed 1\n');
    expect(await metrics.render()).toContain('refreshed 2\n');
    await metrics.shutdown();
    const failing = createPrometheusMetrics({
      registry,
      collect: () => {
        throw new Error('gauge source gone');
      },
    });
    await expect(failing.render()).rejects.toThrow(/gauge source gone/);
    await failing.shutdown();
  });

  it('says so for an empty registry, where the registry rendered nothing', async () => {
    expect(await renderPrometheusText(new MetricsRegistry())).toBe('# no registered metrics');
  });

  it('refuses the names the exporter would rewrite: counters without _total, colons, double underscores', async () => {
    const registry = new MetricsRegistry();
    expect(() => registry.counter({ name: 'lockfabric_requests', help: 'h' })).toThrow(new MetricsError("counter lockfabric_requests: a counter's name ends in _total"));
    expect(() => registry.gauge({ name: 'lockfabric:ratio', help: 'h' })).toThrow(/invalid metric name/);
    expect(() => registry.gauge({ name: 'lockfabric__ratio', help: 'h' })).toThrow(/invalid metric name/);
    expect(() => registry.gauge({ name: 'g', help: 'h', labelNames: ['a__b'] })).toThrow(/invalid label name "a__b"/);
    expect(() => registry.gauge({ name: 'g', help: ' ' })).toThrow(/help text is required/);
    // What the exporter does with such names, were they let through.
    const serializer = new PrometheusSerializer(undefined, false, undefined, true, true);
    const snapshot = [
      { type: 'counter' as const, name: 'lockfabric_requests', help: 'h', series: [{ labels: { a__b: 'x' }, value: 1 }] },
      { type: 'gauge' as const, name: 'lockfabric:ratio', help: 'h', series: [{ labels: {}, value: 1 }] },
      { type: 'gauge' as const, name: 'lockfabric__other', help: '', series: [{ labels: {}, value: 1 }] },
    ];
    const text = serializer.serialize(toResourceMetrics(snapshot, { resource: emptyResource(), startTime: hrTime(), time: hrTime() }));
    expect(text.split('\n').filter((line) => !line.startsWith('#') && line !== '')).toEqual(['lockfabric_requests_total{a_b="x"} 1', 'lockfabric_ratio 1', 'lockfabric_other 1']);
    expect(text).toContain('# HELP lockfabric_other description missing');
  });
});
