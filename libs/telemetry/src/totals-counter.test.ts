import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.js';
import { TotalsCounter } from './totals-counter.js';

describe('TotalsCounter', () => {
  it('adds what each running total grew by, per label value, and treats a smaller total as a restart', () => {
    const registry = new MetricsRegistry();
    const totals = new TotalsCounter(registry.counter({ name: 'x_total', help: 'x', labelNames: ['source'] }), 'source');
    totals.update({ a: 3, b: 1 });
    totals.update({ a: 5, b: 1 });
    totals.update({ a: 2 });
    const text = registry.render();
    expect(text).toContain('x_total{source="a"} 7');
    expect(text).toContain('x_total{source="b"} 1');
  });

  it('feeds an unlabelled counter from the total under the empty key', () => {
    const registry = new MetricsRegistry();
    const totals = new TotalsCounter(registry.counter({ name: 'y_total', help: 'y' }), undefined);
    totals.update({ '': 4 });
    totals.update({ '': 4, other: undefined });
    expect(registry.render()).toContain('y_total 4');
  });
});
