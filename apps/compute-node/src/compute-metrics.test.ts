import { noopTrace } from '@lockfabric/ports';
import type { Completion } from '@lockfabric/ports';
import { ATTR_GRANT_NS, ATTR_LOCK_MODE, ATTR_OUTCOME, ATTR_PROTOCOL, ATTR_VERBS, ATTR_WAIT_NS, MetricsRegistry, SPAN_LOCK_ACQUIRE, SPAN_LOCK_RELEASE, SPAN_LOCK_RESET } from '@lockfabric/telemetry';
import { describe, expect, it } from 'vitest';
import { registerComputeMetrics } from './compute-metrics.js';

function setup() {
  const metrics = new MetricsRegistry();
  const fabric = { post: () => Promise.resolve([] as Completion[]) };
  const trace = registerComputeMetrics(metrics, fabric).trace(noopTrace);
  const value = (name: string, labels: Record<string, string>) => metrics.snapshot().find((m) => m.name === name)?.series.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return { trace, value, fabric };
}

describe('compute-node lock metrics from spans', () => {
  it('an acquire counts once when it ends, from attributes given at start and set later', () => {
    const { trace, value } = setup();
    const span = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_PROTOCOL]: 'caslock', [ATTR_LOCK_MODE]: 'exclusive' } });
    span.setAttribute(ATTR_OUTCOME, 'granted');
    span.setAttribute(ATTR_WAIT_NS, 2_000);
    span.setAttribute(ATTR_GRANT_NS, 5_000);
    span.setAttribute(ATTR_VERBS, 1);
    span.end();
    span.end();
    expect(value('lockfabric_lock_operations_total', { protocol: 'caslock', operation: 'acquire', outcome: 'granted' })).toMatchObject({ value: 1 });
    expect(value('lockfabric_lock_grant_seconds', { protocol: 'caslock', mode: 'exclusive' })).toMatchObject({ count: 1, sum: 5e-6 });
    expect(value('lockfabric_lock_wait_seconds', { protocol: 'caslock', outcome: 'granted' })).toMatchObject({ count: 1, sum: 2e-6 });
    expect(value('lockfabric_verbs_per_acquire', { protocol: 'caslock' })).toMatchObject({ count: 1, sum: 1 });
  });

  it('a release counts as released; a reset takes the first reason key in priority order', () => {
    const { trace, value } = setup();
    trace.startSpan(SPAN_LOCK_RELEASE, { attributes: { [ATTR_PROTOCOL]: 'dslr' } }).end();
    expect(value('lockfabric_lock_operations_total', { protocol: 'dslr', operation: 'release', outcome: 'released' })).toMatchObject({ value: 1 });
    const reset = trace.startSpan(SPAN_LOCK_RESET, { attributes: { [ATTR_PROTOCOL]: 'declock', 'lockfabric.reset.reason': 'generic' } });
    reset.setAttribute('declock.reset.reason', 'timeout');
    reset.setAttribute('lockfabric.reset.reason', 'later');
    reset.end();
    expect(value('lockfabric_lock_resets_total', { protocol: 'declock', reason: 'timeout' })).toMatchObject({ value: 1 });
  });
});
