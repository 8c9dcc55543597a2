import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { Span as SdkSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SpanContextRef, Trace } from '@lockfabric/ports';
import { ATTR_GRANT_NS, ATTR_LINK_ROLE, ATTR_OUTCOME, LINK_ROLE_VALUE_PREVIOUS_HOLDER, OUTCOME_VALUE_GRANTED, OUTCOME_VALUE_TIMEOUT, SPAN_LOCK_ACQUIRE } from './semconv.js';
import { createInMemoryTelemetry } from './setup.js';
import type { InMemoryTelemetry } from './setup.js';
import { isSampled } from './otel-trace.js';
import { seededIdWords } from './span-ids.js';
import { exportedFields } from './exported-fields.js';

const MS = 1_000_000;
const EPOCH_MS = 1_764_000_000_000;
const SAMPLED_REMOTE: SpanContextRef = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
const UNSAMPLED_OTHER: SpanContextRef = { traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb', traceFlags: 0 };

/** Counts the SDK spans a pipeline starts. */
class StartCounter implements SpanProcessor {
  started = 0;
  onStart(_span: SdkSpan): void {
    this.started++;
  }
  onEnd(): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** A clock the test moves: `performance.now()` and `Date.now()` (both read by the SDK) follow it. */
function manualClock() {
  let ms = 1_000;
  vi.spyOn(performance, 'now').mockImplementation(() => ms);
  vi.spyOn(Date, 'now').mockImplementation(() => EPOCH_MS + Math.floor(ms));
  return (byMs: number) => {
    ms += byMs;
  };
}

/**
 * Unsampled lock spans of every kind the tail rule judges, plus a verb under them and a span under
 * a sampled remote parent. Returns the contexts it read while the spans were open.
 */
function script(trace: Trace, advance: (ms: number) => void) {
  const root = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { 'lockfabric.protocol': 'dslr', 'lockfabric.lock.id': 7 }, links: [UNSAMPLED_OTHER] });
  advance(0.25);
  const verb = trace.startSpan('verb.cas', { parent: root.context });
  verb.setAttribute('lockfabric.verb.status', 'ok');
  verb.end();
  const handover = trace.startSpan('lock.handover', { parent: root.context, attributes: { 'lockfabric.lock.id': 7 } });
  handover.addLink(SAMPLED_REMOTE, { [ATTR_LINK_ROLE]: LINK_ROLE_VALUE_PREVIOUS_HOLDER });
  advance(0.5);
  handover.recordError(new RangeError('out of bounds'));
  advance(0.125);
  handover.recordError({ status: 'bad-rkey' });
  handover.setAttribute(ATTR_OUTCOME, OUTCOME_VALUE_TIMEOUT);
  handover.end();
  handover.setAttribute('after.end', true);
  root.setAttribute('lockfabric.lock.id', 8);
  root.setAttribute(ATTR_GRANT_NS, 6 * MS);
  root.setAttribute(ATTR_OUTCOME, OUTCOME_VALUE_GRANTED);
  advance(1);
  root.end();
  root.end();
  const fast = trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_GRANT_NS]: 1, [ATTR_OUTCOME]: OUTCOME_VALUE_GRANTED } });
  fast.end();
  const release = trace.startSpan('lock.release');
  advance(20);
  release.end();
  const slowByDuration = trace.startSpan(SPAN_LOCK_ACQUIRE);
  advance(7.3);
  slowByDuration.end();
  const sampled = trace.startSpan('verb.read', { parent: SAMPLED_REMOTE });
  advance(0.01);
  sampled.end();
  return { root: root.context, verb: verb.context, handover: handover.context, slowByDuration: slowByDuration.context };
}

function run(mutantEagerUnsampled: boolean) {
  const advance = manualClock();
  const observer = new StartCounter();
  telemetry = createInMemoryTelemetry({ ratio: 0, slowMs: 5, idWords: seededIdWords(42), observer, mutantEagerUnsampled });
  const contexts = script(telemetry.trace, advance);
  vi.restoreAllMocks();
  return { contexts, started: observer.started, exported: telemetry.spans().map(exportedFields) };
}

let telemetry: InMemoryTelemetry;

describe('deferred unsampled spans', () => {
  afterEach(async () => {
    vi.restoreAllMocks();
    await telemetry.shutdown();
  });

  it('export exactly what the eager path exported, and start SDK spans only for those', () => {
    // One call site for both, so that the errors' stack traces match too.
    const [eager, deferred] = [true, false].map(run) as [ReturnType<typeof run>, ReturnType<typeof run>];
    expect(deferred.exported).toEqual(eager.exported);
    expect(deferred.contexts).toEqual(eager.contexts);
    // Kept: the handover (failed), the root (slow by grant time), the acquire slow by duration, the
    // sampled verb. The eager path also started the fast acquire and the release.
    expect(deferred.exported.map((span) => [span.name, span.attributes['lockfabric.sampling.tail_kept']])).toEqual([
      ['lock.handover', 'error'],
      [SPAN_LOCK_ACQUIRE, 'slow'],
      [SPAN_LOCK_ACQUIRE, 'slow'],
      ['verb.read', undefined],
    ]);
    expect(deferred.started).toBe(4);
    expect(eager.started).toBe(6);
  });

  it('keeps the ids its context showed, for the span and its children', () => {
    const { contexts, exported } = run(false);
    const [handover, root] = exported;
    expect(root?.spanContext).toMatchObject({ traceId: contexts.root?.traceId, spanId: contexts.root?.spanId });
    expect(handover?.parentSpanContext).toMatchObject({ traceId: contexts.root?.traceId, spanId: contexts.root?.spanId, traceFlags: 0 });
    expect(handover?.spanContext.spanId).toBe(contexts.handover?.spanId);
    expect(contexts.verb?.traceId).toBe(contexts.root?.traceId);
    expect([contexts.root, contexts.verb, contexts.handover].map((context) => context?.traceFlags)).toEqual([0, 0, 0]);
  });

  it('samples a root as the ratio sampler does for its trace id, and children follow their parent', () => {
    const observer = new StartCounter();
    telemetry = createInMemoryTelemetry({ ratio: 0.3, slowMs: 1_000, observer });
    const ratioSampler = new TraceIdRatioBasedSampler(0.3);
    let sampledRoots = 0;
    for (let i = 0; i < 1_000; i++) {
      const root = telemetry.trace.startSpan(i % 2 === 0 ? SPAN_LOCK_ACQUIRE : 'switch.packet');
      const context = root.context as SpanContextRef;
      const expected = ratioSampler.shouldSample(ROOT_CONTEXT, context.traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;
      expect(isSampled(context)).toBe(expected);
      if (expected) sampledRoots++;
      for (const name of ['lock.grant', 'verb.write']) {
        const child = telemetry.trace.startSpan(name, { parent: context });
        expect(child.context).toMatchObject({ traceId: context.traceId, traceFlags: context.traceFlags });
        child.end();
      }
      root.end();
    }
    expect(sampledRoots).toBeGreaterThan(200);
    expect(sampledRoots).toBeLessThan(400);
    // Each sampled root and its two children went through the SDK; nothing else did.
    expect(observer.started).toBe(3 * sampledRoots);
    expect(telemetry.spans()).toHaveLength(3 * sampledRoots);
  });
});
