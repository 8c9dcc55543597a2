import { describe, expect, it } from 'vitest';
import { MetricsError, MetricsRegistry } from './metrics.js';

describe('metrics registry', () => {
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
});
