import { describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.js';
import { TotalsCounter } from './totals-counter.js';

describe('TotalsCounter', () => {
  it('adds what each running total grew by, per label value, and treats a smaller total as a restart', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter({ name: 'x_total', help: 'x', labelNames: ['source'] });
    const totals = new TotalsCounter(counter, 'source');
    totals.update({ a: 3, b: 1 });
    totals.update({ a: 5, b: 1 });
    totals.update({ a: 2 });
    expect(counter.get({ source: 'a' })).toBe(7);
    expect(counter.get({ source: 'b' })).toBe(1);
  });

  it('feeds an unlabelled counter from the total under the empty key', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter({ name: 'y_total', help: 'y' });
    const totals = new TotalsCounter(counter, undefined);
    totals.update({ '': 4 });
    totals.update({ '': 4, other: undefined });
    expect(counter.get()).toBe(4);
  });
});
