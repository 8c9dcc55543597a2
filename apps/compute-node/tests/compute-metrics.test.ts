import { describe, expect, it } from 'vitest';
import type { Completion, PostOptions, Span, SpanAttributeValue, StartSpanOptions, Trace, WorkRequest } from '@lockfabric/ports';
import { ATTR_GRANT_NS, ATTR_LOCK_MODE, ATTR_OUTCOME, ATTR_PROTOCOL, ATTR_VERBS, ATTR_WAIT_NS, MetricsRegistry, SPAN_LOCK_ACQUIRE, SPAN_LOCK_HANDOVER, SPAN_LOCK_RELEASE, SPAN_LOCK_RESET, parsePrometheusText } from '@lockfabric/telemetry';
import { registerComputeMetrics } from '../src/compute-metrics.js';

interface Recorded {
  readonly name: string;
  readonly attributes: Record<string, SpanAttributeValue>;
  ends: number;
}

/** A Trace that records what reaches it, to show the metrics wrapper delegates everything. */
function recordingTrace(): Trace & { readonly spans: Recorded[] } {
  const spans: Recorded[] = [];
  return {
    spans,
    startSpan(name: string, options?: StartSpanOptions): Span {
      const recorded: Recorded = { name, attributes: { ...options?.attributes }, ends: 0 };
      spans.push(recorded);
      return {
        context: { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 },
        setAttribute: (key, value) => void (recorded.attributes[key] = value),
        addLink: () => undefined,
        recordError: () => undefined,
        end: () => void recorded.ends++,
      };
    },
  };
}

function fakeFabric() {
  const posted: WorkRequest[][] = [];
  return {
    posted,
    post: (batch: readonly WorkRequest[], _options?: PostOptions): Promise<Completion[]> => {
      posted.push([...batch]);
      return Promise.resolve(batch.map(() => ({ status: 'ok' as const, value: 0n })));
    },
  };
}

const addr = { node: 0, region: 0, rkey: 1, offset: 0 };

function setup() {
  const registry = new MetricsRegistry();
  const fabric = fakeFabric();
  const inner = recordingTrace();
  const metrics = registerComputeMetrics(registry, fabric);
  const trace = metrics.trace(inner);
  // What a scrape serves: the compute node collects its tallies first.
  const scrape = () => {
    metrics.collect();
    return registry.render();
  };
  return { scrape, fabric, inner, trace };
}

describe('registerComputeMetrics', () => {
  it('counts every posted verb by opcode and still posts the batch', async () => {
    const { scrape, fabric } = setup();
    const completions = await fabric.post([
      { op: 'cas', addr, compare: 0n, swap: 1n },
      { op: 'read', addr, length: 8 },
      { op: 'cas', addr, compare: 1n, swap: 0n },
    ]);
    expect(completions).toHaveLength(3);
    expect(fabric.posted).toHaveLength(1);
    const text = parsePrometheusText(scrape());
    const verbs = text.get('lockfabric_compute_verbs_total')!.samples.map((s) => [s.labels['opcode'], s.value]);
    expect(verbs).toEqual([
      ['cas', 2],
      ['read', 1],
    ]);
  });

  it('a granted acquire feeds grant, wait and verbs-per-acquire; attributes set later count', () => {
    const { scrape, trace, inner } = setup();
    const span = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_PROTOCOL]: 'caslock', [ATTR_LOCK_MODE]: 'exclusive' } });
    span.setAttribute(ATTR_OUTCOME, 'granted');
    span.setAttribute(ATTR_WAIT_NS, 2_000_000);
    span.setAttribute(ATTR_GRANT_NS, 3_000_000);
    span.setAttribute(ATTR_VERBS, 3);
    span.end();
    span.end(); // a second end must not count twice
    const families = parsePrometheusText(scrape());
    expect(families.get('lockfabric_lock_grant_seconds')!.samples.find((s) => s.name.endsWith('_sum'))).toMatchObject({ labels: { protocol: 'caslock', mode: 'exclusive' }, value: 0.003 });
    expect(families.get('lockfabric_lock_wait_seconds')!.samples.find((s) => s.name.endsWith('_sum'))).toMatchObject({ labels: { protocol: 'caslock', outcome: 'granted' }, value: 0.002 });
    // 3 verbs land in the bucket le="3" and every bucket above it.
    const verbBuckets = families.get('lockfabric_verbs_per_acquire')!.samples.filter((s) => s.name.endsWith('_bucket'));
    expect(verbBuckets.find((s) => s.labels['le'] === '2')?.value).toBe(0);
    expect(verbBuckets.find((s) => s.labels['le'] === '3')?.value).toBe(1);
    expect(families.get('lockfabric_lock_operations_total')!.samples).toEqual([{ name: 'lockfabric_lock_operations_total', labels: { protocol: 'caslock', operation: 'acquire', outcome: 'granted' }, value: 1 }]);
    // The inner trace saw the span, its attributes and exactly the calls made.
    expect(inner.spans).toHaveLength(1);
    expect(inner.spans[0]).toMatchObject({ name: SPAN_LOCK_ACQUIRE, ends: 2, attributes: { [ATTR_OUTCOME]: 'granted', [ATTR_VERBS]: 3 } });
  });

  it('without a grant instant the wait is the grant time; a failed acquire only feeds wait', () => {
    const { scrape, trace } = setup();
    const ok = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_PROTOCOL]: 'dslr', [ATTR_LOCK_MODE]: 'shared', [ATTR_OUTCOME]: 'granted', [ATTR_WAIT_NS]: 5_000 } });
    ok.end();
    const failed = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_PROTOCOL]: 'dslr', [ATTR_LOCK_MODE]: 'shared' } });
    failed.setAttribute(ATTR_OUTCOME, 'timeout');
    failed.setAttribute(ATTR_WAIT_NS, 1_000_000_000);
    failed.end();
    const families = parsePrometheusText(scrape());
    const grantCount = families.get('lockfabric_lock_grant_seconds')!.samples.filter((s) => s.name.endsWith('_count'));
    expect(grantCount).toEqual([{ name: 'lockfabric_lock_grant_seconds_count', labels: { protocol: 'dslr', mode: 'shared' }, value: 1 }]);
    expect(families.get('lockfabric_lock_grant_seconds')!.samples.find((s) => s.name.endsWith('_sum'))?.value).toBe(5e-6);
    const waitCounts = families.get('lockfabric_lock_wait_seconds')!.samples.filter((s) => s.name.endsWith('_count')).map((s) => [s.labels['outcome'], s.value]);
    expect(waitCounts).toEqual([
      ['granted', 1],
      ['timeout', 1],
    ]);
  });

  it('releases count as operations, handovers on their own; other spans pass through unobserved', () => {
    const { scrape, trace, inner } = setup();
    trace.startSpan(SPAN_LOCK_RELEASE, { attributes: { [ATTR_PROTOCOL]: 'shiftlock' } }).end();
    trace.startSpan(SPAN_LOCK_HANDOVER, { attributes: { [ATTR_PROTOCOL]: 'shiftlock' } }).end();
    trace.startSpan('verb.cas', { attributes: { [ATTR_PROTOCOL]: 'shiftlock', [ATTR_OUTCOME]: 'granted', [ATTR_WAIT_NS]: 1 } }).end();
    const families = parsePrometheusText(scrape());
    expect(families.get('lockfabric_lock_operations_total')!.samples.map((s) => [s.labels['operation'], s.labels['outcome'], s.value])).toEqual([['release', 'released', 1]]);
    expect(families.get('lockfabric_lock_handovers_total')!.samples.map((s) => [s.labels['protocol'], s.value])).toEqual([['shiftlock', 1]]);
    expect(families.get('lockfabric_lock_wait_seconds')!.samples).toEqual([]);
    expect(inner.spans.map((s) => s.name)).toEqual([SPAN_LOCK_RELEASE, SPAN_LOCK_HANDOVER, 'verb.cas']);
  });

  it('lock resets count by protocol and reason, read from the reason attribute each protocol uses', () => {
    const { scrape, trace } = setup();
    trace.startSpan(SPAN_LOCK_RESET, { attributes: { [ATTR_PROTOCOL]: 'declock', 'declock.reset.reason': 'timeout' } }).end();
    trace.startSpan(SPAN_LOCK_RESET, { attributes: { [ATTR_PROTOCOL]: 'declock', 'declock.reset.reason': 'timeout' } }).end();
    trace.startSpan(SPAN_LOCK_RESET, { attributes: { [ATTR_PROTOCOL]: 'dslr', 'lockfabric.dslr.reset_cause': 'overflow' } }).end();
    trace.startSpan(SPAN_LOCK_RESET, { attributes: { [ATTR_PROTOCOL]: 'shiftlock' } }).end();
    const samples = parsePrometheusText(scrape()).get('lockfabric_lock_resets_total')!.samples;
    expect(samples.map((s) => [s.labels['protocol'], s.labels['reason'], s.value])).toEqual([
      ['declock', 'timeout', 2],
      ['dslr', 'overflow', 1],
      ['shiftlock', 'unknown', 1],
    ]);
  });
});
