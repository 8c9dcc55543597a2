import { SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { noopTrace } from '@lockfabric/ports';
import type { SpanContextRef } from '@lockfabric/ports';
import { ATTR_LINK_ROLE, ATTR_LOCK_ID, ATTR_PROTOCOL, LINK_ROLE_VALUE_PREVIOUS_HOLDER, SPAN_LOCK_ACQUIRE, SPAN_LOCK_HANDOVER } from './semconv.js';
import { createInMemoryTelemetry } from './setup.js';
import type { InMemoryTelemetry } from './setup.js';
import { isSampled } from './otel-trace.js';

const REMOTE: SpanContextRef = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

describe('the Trace port over OpenTelemetry', () => {
  let telemetry: InMemoryTelemetry;
  afterEach(async () => {
    await telemetry.shutdown();
  });

  it('starts a root span with attributes and exposes its context', () => {
    telemetry = createInMemoryTelemetry();
    const span = telemetry.trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_PROTOCOL]: 'dslr', [ATTR_LOCK_ID]: 7 } });
    span.setAttribute('lockfabric.retries', 2);
    span.end();
    const [exported] = telemetry.spans();
    expect(exported?.name).toBe(SPAN_LOCK_ACQUIRE);
    expect(exported?.parentSpanContext).toBeUndefined();
    expect(exported?.attributes).toEqual({ [ATTR_PROTOCOL]: 'dslr', [ATTR_LOCK_ID]: 7, 'lockfabric.retries': 2 });
    expect(span.context).toEqual({
      traceId: exported?.spanContext().traceId,
      spanId: exported?.spanContext().spanId,
      traceFlags: TraceFlags.SAMPLED,
    });
  });

  it('continues a remote parent and links other spans, with link attributes', () => {
    telemetry = createInMemoryTelemetry();
    const other: SpanContextRef = { traceId: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', spanId: 'bbbbbbbbbbbbbbbb', traceFlags: 0 };
    const span = telemetry.trace.startSpan(SPAN_LOCK_HANDOVER, { parent: REMOTE, links: [other] });
    span.addLink(REMOTE, { [ATTR_LINK_ROLE]: LINK_ROLE_VALUE_PREVIOUS_HOLDER });
    span.end();
    const [exported] = telemetry.spans();
    expect(exported?.spanContext().traceId).toBe(REMOTE.traceId);
    expect(exported?.parentSpanContext?.spanId).toBe(REMOTE.spanId);
    expect(exported?.parentSpanContext?.isRemote).toBe(true);
    expect(exported?.links.map((link) => [link.context.spanId, link.attributes])).toEqual([
      [other.spanId, undefined],
      [REMOTE.spanId, { [ATTR_LINK_ROLE]: LINK_ROLE_VALUE_PREVIOUS_HOLDER }],
    ]);
  });

  it('ignores an invalid parent or link instead of failing', () => {
    telemetry = createInMemoryTelemetry();
    const bad = { traceId: 'nothex', spanId: '00f067aa0ba902b7', traceFlags: 1 };
    const span = telemetry.trace.startSpan('verb.read', { parent: bad, links: [bad] });
    span.addLink(bad);
    span.end();
    const [exported] = telemetry.spans();
    expect(exported?.parentSpanContext).toBeUndefined();
    expect(exported?.links).toEqual([]);
    expect(exported?.spanContext().traceId).not.toBe('nothex');
  });

  it('records errors as an exception event and ERROR status', () => {
    telemetry = createInMemoryTelemetry();
    const span = telemetry.trace.startSpan('verb.cas');
    span.recordError(new RangeError('out of bounds'));
    span.end();
    const other = telemetry.trace.startSpan('verb.faa');
    other.recordError({ status: 'bad-rkey' });
    other.end();
    const [first, second] = telemetry.spans();
    expect(first?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'out of bounds' });
    expect(first?.events[0]?.attributes?.['exception.type']).toBe('RangeError');
    expect(second?.status).toEqual({ code: SpanStatusCode.ERROR, message: '{"status":"bad-rkey"}' });
  });

  it('returns the context of unsampled spans too, with the sampled flag clear', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0 });
    const root = telemetry.trace.startSpan('lock.release');
    expect(root.context).toBeDefined();
    expect(isSampled(root.context as SpanContextRef)).toBe(false);
    const child = telemetry.trace.startSpan('verb.write', { parent: root.context });
    expect(child.context?.traceId).toBe(root.context?.traceId);
    expect(isSampled(child.context as SpanContextRef)).toBe(false);
    root.end();
    child.end();
    expect(telemetry.spans()).toEqual([]);
  });

  it('follows a sampled remote parent even at ratio 0 (parent-based head sampling)', () => {
    telemetry = createInMemoryTelemetry({ ratio: 0 });
    const span = telemetry.trace.startSpan('verb.read', { parent: REMOTE });
    expect(isSampled(span.context as SpanContextRef)).toBe(true);
    span.end();
    expect(telemetry.spans()).toHaveLength(1);
  });

  it('the no-op Trace has no context', () => {
    telemetry = createInMemoryTelemetry();
    expect(noopTrace.startSpan('x').context).toBeUndefined();
  });
});
