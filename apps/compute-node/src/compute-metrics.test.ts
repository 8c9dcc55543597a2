import { noopTrace } from '@lockfabric/ports';
import type { Completion, WorkRequest } from '@lockfabric/ports';
import { ATTR_GRANT_NS, ATTR_LOCK_MODE, ATTR_OUTCOME, ATTR_PROTOCOL, ATTR_VERBS, ATTR_WAIT_NS, MetricsRegistry, SPAN_LOCK_ACQUIRE, SPAN_LOCK_RELEASE, SPAN_LOCK_RESET } from '@lockfabric/telemetry';
import { describe, expect, it } from 'vitest';
import { registerComputeMetrics } from './compute-metrics.js';

function setup(metrics = new MetricsRegistry()) {
  const fabric = { post: (_batch: readonly WorkRequest[]) => Promise.resolve([] as Completion[]) };
  const computeMetrics = registerComputeMetrics(metrics, fabric);
  const trace = computeMetrics.trace(noopTrace);
  // As a scrape does: the tallies reach the registry first.
  const value = (name: string, labels: Record<string, string>) => {
    computeMetrics.collect();
    return metrics.snapshot().find((m) => m.name === name)?.series.find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  };
  return { trace, value, fabric, collect: () => computeMetrics.collect() };
}

/** A registry that counts the `inc` calls its counters get: each is a label lookup in the series tree. */
function countingRegistry(): { metrics: MetricsRegistry; incs: () => number } {
  const metrics = new MetricsRegistry();
  let incs = 0;
  const counter = metrics.counter.bind(metrics);
  metrics.counter = (options) => {
    const inner = counter(options);
    return { ...inner, inc: (labels, value) => (incs++, inner.inc(labels, value)) };
  };
  return { metrics, incs: () => incs };
}

const CAS: WorkRequest = { op: 'cas', addr: { node: 0, region: 0, rkey: 1, offset: 0 }, compare: 0n, swap: 1n };
const WRITE: WorkRequest = { op: 'write', addr: { node: 0, region: 0, rkey: 1, offset: 0 }, data: new Uint8Array(8) };

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

  it('counts verbs and operations without touching the registry until collected (a count, not a timing)', async () => {
    const { metrics, incs } = countingRegistry();
    const { trace, fabric, value } = setup(metrics);
    for (let i = 0; i < 100; i++) {
      await fabric.post([CAS, WRITE]);
      const acquire = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_PROTOCOL]: 'caslock', [ATTR_OUTCOME]: 'granted' } });
      acquire.end();
      trace.startSpan(SPAN_LOCK_RELEASE, { attributes: { [ATTR_PROTOCOL]: 'caslock' } }).end();
    }
    // The old wrapper made one labelled inc per verb and one per operation: 400 here.
    expect(incs()).toBe(0);
    expect(value('lockfabric_compute_verbs_total', { opcode: 'cas' })).toMatchObject({ value: 100 });
    expect(value('lockfabric_compute_verbs_total', { opcode: 'write' })).toMatchObject({ value: 100 });
    expect(value('lockfabric_lock_operations_total', { protocol: 'caslock', operation: 'acquire', outcome: 'granted' })).toMatchObject({ value: 100 });
    expect(value('lockfabric_lock_operations_total', { protocol: 'caslock', operation: 'release', outcome: 'released' })).toMatchObject({ value: 100 });
    // one inc per series at the first collect; later collects add nothing and make no call
    expect(incs()).toBe(4);
    await fabric.post([CAS]);
    expect(value('lockfabric_compute_verbs_total', { opcode: 'cas' })).toMatchObject({ value: 101 });
    expect(incs()).toBe(5);
  });
});
