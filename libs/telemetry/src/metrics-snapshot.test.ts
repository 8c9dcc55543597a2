import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.js';

describe('registry snapshot', () => {
  it('copies every metric in registration order, labels by name, histogram counts per bucket', () => {
    const registry = new MetricsRegistry();
    const ops = registry.counter({ name: 'ops_total', help: 'Ops.', labelNames: ['op', 'node'] });
    const up = registry.gauge({ name: 'up', help: 'Up.' });
    const wait = registry.histogram({ name: 'wait_seconds', help: 'Wait.', labelNames: ['p'], buckets: [0.1, 1] });
    ops.inc({ node: 2, op: 'cas' }, 3);
    up.set(undefined, -1.5);
    wait.observe({ p: 'x' }, 0.05);
    wait.observe({ p: 'x' }, 0.5);
    wait.observe({ p: 'x' }, 0.7);
    wait.observe({ p: 'x' }, 9);
    const snapshot = registry.snapshot();
    expect(snapshot).toEqual([
      { type: 'counter', name: 'ops_total', help: 'Ops.', series: [{ labels: { op: 'cas', node: '2' }, value: 3 }] },
      { type: 'gauge', name: 'up', help: 'Up.', series: [{ labels: {}, value: -1.5 }] },
      { type: 'histogram', name: 'wait_seconds', help: 'Wait.', bounds: [0.1, 1], series: [{ labels: { p: 'x' }, counts: [1, 2, 1], sum: 10.25, count: 4 }] },
    ]);
    // Taking a snapshot leaves the registry alone, and later updates do not reach it.
    expect(registry.snapshot()).toEqual(snapshot);
    ops.inc({ node: 2, op: 'cas' });
    wait.observe({ p: 'x' }, 0.05);
    expect(snapshot[0]).toMatchObject({ series: [{ value: 3 }] });
    expect(snapshot[2]).toMatchObject({ series: [{ counts: [1, 2, 1], count: 4 }] });
  });

  it('is empty for an empty registry', () => {
    expect(new MetricsRegistry().snapshot()).toEqual([]);
  });
});
