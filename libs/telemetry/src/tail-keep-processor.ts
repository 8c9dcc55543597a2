import { SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import type { AttributeValue, Context } from '@opentelemetry/api';
import { hrTimeToNanoseconds } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NS_PER_MS } from '@lockfabric/ports';
import {
  ATTR_GRANT_NS,
  ATTR_OUTCOME,
  ATTR_TAIL_KEPT,
  SPAN_LOCK_ACQUIRE,
  SUCCESS_OUTCOMES,
  TAIL_KEPT_VALUE_ERROR,
  TAIL_KEPT_VALUE_SLOW,
} from './semconv.js';

export interface TailRule {
  /** `lock.acquire` spans whose grant time exceeds this are exported even when not sampled; unset: none. */
  readonly slowMs?: number;
}

export type TailVerdict = 'sampled' | typeof TAIL_KEPT_VALUE_SLOW | typeof TAIL_KEPT_VALUE_ERROR | 'drop';

/**
 * Decides what happens to an ended span. Sampled spans always pass. An unsampled span passes when it
 * failed (status ERROR, or a `lockfabric.outcome` that is not a success) or when it is a
 * `lock.acquire` slower than the threshold. Slowness is read from `lockfabric.grant_ns` when the
 * protocol set it — that is the substrate clock, virtual under `sim` — and from the span's wall
 * duration otherwise.
 */
export function tailVerdict(span: ReadableSpan, rule: TailRule): TailVerdict {
  if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) !== 0) return 'sampled';
  return unsampledVerdict(span.name, span.status.code, (key) => span.attributes[key], () => hrTimeToNanoseconds(span.duration), rule);
}

/**
 * {@link tailVerdict} for a span head sampling did not sample, from its parts: a deferred span
 * (deferred-span.ts) decides with it before anything reaches the SDK. `durationNs` is asked only
 * for a `lock.acquire` without `lockfabric.grant_ns`.
 */
export function unsampledVerdict(
  name: string,
  statusCode: SpanStatusCode,
  attribute: (key: string) => AttributeValue | undefined,
  durationNs: () => number,
  rule: TailRule,
): Exclude<TailVerdict, 'sampled'> {
  if (statusCode === SpanStatusCode.ERROR || isFailedOutcome(attribute(ATTR_OUTCOME))) return TAIL_KEPT_VALUE_ERROR;
  if (rule.slowMs !== undefined && name === SPAN_LOCK_ACQUIRE && acquireNs(attribute(ATTR_GRANT_NS), durationNs) > rule.slowMs * NS_PER_MS) {
    return TAIL_KEPT_VALUE_SLOW;
  }
  return 'drop';
}

function isFailedOutcome(outcome: AttributeValue | undefined): boolean {
  return typeof outcome === 'string' && !SUCCESS_OUTCOMES.has(outcome);
}

function acquireNs(grantNs: AttributeValue | undefined, durationNs: () => number): number {
  return typeof grantNs === 'number' ? grantNs : durationNs();
}

/**
 * Wraps an exporting processor (batch or simple) and forwards only the spans {@link tailVerdict}
 * keeps. Spans kept by the tail rule are handed on as a view with the sampled flag set — the
 * SDK's processors drop unsampled spans — and with `lockfabric.sampling.tail_kept` saying why.
 */
export class TailKeepProcessor implements SpanProcessor {
  constructor(
    private readonly next: SpanProcessor,
    private readonly rule: TailRule,
  ) {}

  onStart(span: Span, parentContext: Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    const verdict = tailVerdict(span, this.rule);
    if (verdict === 'drop') return;
    this.next.onEnd(verdict === 'sampled' ? span : keptView(span, verdict));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

function keptView(span: ReadableSpan, reason: string): ReadableSpan {
  const context = span.spanContext();
  const sampledContext = { ...context, traceFlags: context.traceFlags | TraceFlags.SAMPLED };
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => sampledContext,
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: { ...span.attributes, [ATTR_TAIL_KEPT]: reason },
    links: span.links,
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}
