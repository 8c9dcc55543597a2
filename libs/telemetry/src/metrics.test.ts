import { describe, expect, it } from 'vitest';
import { MetricsError, MetricsRegistry, escapeLabelValue, formatValue } from './metrics.js';

describe('Prometheus registry', () => {
  it('renders counters, gauges and histograms in text format 0.0.4', () => {
    const registry = new MetricsRegistry();
    const verbs = registry.counter({ name: 'lockfabric_nic_verbs_total', help: 'Verbs served by the NIC.', labelNames: ['op', 'node'] });
    const up = registry.gauge({ name: 'lockfabric_up', help: 'Line one\nback\\slash "quoted"' });
    const grant = registry.histogram({ name: 'lockfabric_acquire_grant_seconds', help: 'Grant time.', labelNames: ['protocol'], buckets: [0.001, 0.01, 0.1] });
    verbs.inc({ op: 'cas', node: 1 });
    verbs.inc({ op: 'cas', node: 1 }, 2);
    verbs.inc({ node: 2, op: 'read "x"\\\n' });
    up.set(undefined, 1);
    grant.observe({ protocol: 'dslr' }, 0.0005);
    grant.observe({ protocol: 'dslr' }, 0.01);
    grant.observe({ protocol: 'dslr' }, 5);
    expect(registry.render()).toBe(
      [
        '# HELP lockfabric_nic_verbs_total Verbs served by the NIC.',
        '# TYPE lockfabric_nic_verbs_total counter',
        'lockfabric_nic_verbs_total{op="cas",node="1"} 3',
        'lockfabric_nic_verbs_total{op="read \\"x\\"\\\\\\n",node="2"} 1',
        '# HELP lockfabric_up Line one\\nback\\\\slash "quoted"',
        '# TYPE lockfabric_up gauge',
        'lockfabric_up 1',
        '# HELP lockfabric_acquire_grant_seconds Grant time.',
        '# TYPE lockfabric_acquire_grant_seconds histogram',
        'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="0.001"} 1',
        'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="0.01"} 2',
        'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="0.1"} 2',
        'lockfabric_acquire_grant_seconds_bucket{protocol="dslr",le="+Inf"} 3',
        'lockfabric_acquire_grant_seconds_sum{protocol="dslr"} 5.0105',
        'lockfabric_acquire_grant_seconds_count{protocol="dslr"} 3',
        '',
      ].join('\n'),
    );
  });

  it('shows an unlabelled metric as 0 before first use, and nothing for an unused labelled one', () => {
    const registry = new MetricsRegistry();
    registry.counter({ name: 'a_total', help: 'a' });
    registry.histogram({ name: 'b', help: 'b', buckets: [1] });
    registry.gauge({ name: 'c', help: 'c', labelNames: ['x'] });
    expect(registry.render()).toBe(
      [
        '# HELP a_total a',
        '# TYPE a_total counter',
        'a_total 0',
        '# HELP b b',
        '# TYPE b histogram',
        'b_bucket{le="1"} 0',
        'b_bucket{le="+Inf"} 0',
        'b_sum 0',
        'b_count 0',
        '# HELP c c',
        '# TYPE c gauge',
        '',
      ].join('\n'),
    );
    expect(new MetricsRegistry().render()).toBe('');
  });

  it('gauges go up and down; getters read series back', () => {
    const registry = new MetricsRegistry();
    const queue = registry.gauge({ name: 'queue_depth', help: 'q', labelNames: ['client'] });
    queue.inc({ client: 'a' }, 5);
    queue.dec({ client: 'a' }, 2);
    expect(queue.get({ client: 'a' })).toBe(3);
    expect(queue.get({ client: 'b' })).toBe(0);
    const h = registry.histogram({ name: 'h', help: 'h', buckets: [1, 2] });
    h.observe(undefined, 1);
    h.observe(undefined, 3);
    expect(h.get()).toEqual({ buckets: [1, 0, 1], sum: 4, count: 2 });
  });

  it('rejects misuse with MetricsError', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter({ name: 'ok_total', help: 'h', labelNames: ['a'] });
    expect(() => registry.counter({ name: 'ok_total', help: 'h' })).toThrow(MetricsError);
    expect(() => registry.counter({ name: '1bad', help: 'h' })).toThrow(/invalid metric name/);
    expect(() => registry.gauge({ name: 'g', help: 'h', labelNames: ['__reserved'] })).toThrow(/invalid label name/);
    expect(() => registry.gauge({ name: 'g2', help: 'h', labelNames: ['a', 'a'] })).toThrow(/duplicate/);
    expect(() => registry.histogram({ name: 'h1', help: 'h', buckets: [1, 1] })).toThrow(/increase strictly/);
    expect(() => registry.histogram({ name: 'h2', help: 'h', buckets: [1, Infinity] })).toThrow(/finite/);
    expect(() => registry.histogram({ name: 'h3', help: 'h', buckets: [1], labelNames: ['le'] })).toThrow(/reserved/);
    expect(() => counter.inc({ a: 'x' }, -1)).toThrow(/only increase/);
    expect(() => counter.inc({})).toThrow('metric ok_total takes labels [a]; missing: a');
    expect(() => counter.inc({ a: 'x', b: 'y' })).toThrow('metric ok_total takes labels [a]; unknown: b');
  });

  it('finds a used series again by its labels in any key order, and still refuses wrong labels after use', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter({ name: 'ops_total', help: 'h', labelNames: ['protocol', 'outcome'] });
    counter.inc({ protocol: 'caslock', outcome: 'granted' });
    counter.inc({ outcome: 'granted', protocol: 'caslock' }, 2);
    counter.inc({ protocol: 'caslock', outcome: 'timeout' });
    counter.inc({ protocol: 1, outcome: 'x' });
    counter.inc({ protocol: '1', outcome: 'x' });
    expect(registry.snapshot().find((m) => m.name === 'ops_total')?.series).toStrictEqual([
      { labels: { protocol: 'caslock', outcome: 'granted' }, value: 3 },
      { labels: { protocol: 'caslock', outcome: 'timeout' }, value: 1 },
      { labels: { protocol: '1', outcome: 'x' }, value: 2 },
    ]);
    expect(() => counter.inc({ protocol: 'caslock', outcome: 'granted', extra: 'y' })).toThrow('unknown: extra');
    expect(() => counter.inc({ protocol: 'caslock' })).toThrow('missing: outcome');
    const plain = registry.counter({ name: 'plain_total', help: 'h' });
    plain.inc();
    plain.inc(undefined, 4);
    expect(plain.get()).toBe(5);
    expect(() => plain.inc({ extra: 'y' })).toThrow('unknown: extra');
  });

  it('formats special values and escapes label values', () => {
    expect([formatValue(Infinity), formatValue(-Infinity), formatValue(NaN), formatValue(0.1), formatValue(1e21)]).toEqual(['+Inf', '-Inf', 'NaN', '0.1', '1e+21']);
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
  });
});
