import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace as otelTraceApi } from '@opentelemetry/api';
import type { Context, Link, Span as OtelSpan, Tracer } from '@opentelemetry/api';
import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace } from '@lockfabric/ports';
import { DeferredSpan, UnsampledSpan } from './deferred-span.js';
import type { DeferredExport } from './deferred-span.js';
import { isTailCandidate } from './sampling.js';
import { errorMessage, exceptionOf, fromSpanContext, toRemoteSpanContext } from './span-context.js';
import { hex32, ratioSamples, spanIdLow, traceIdLast } from './span-ids.js';

export { fromSpanContext, toRemoteSpanContext } from './span-context.js';

/** How createOtelTrace treats spans head sampling did not sample (see {@link createOtelTrace}). */
export interface DeferUnsampled extends DeferredExport {
  /** `ratioUpperBound(ratio)` of the head sampler's ratio for root spans. */
  readonly rootUpperBound: number;
}

/**
 * The `Trace` port over an OpenTelemetry tracer.
 *
 * Parents are explicit: a span's parent is `options.parent` (made a remote parent context) or
 * nothing. The ambient OpenTelemetry context is never consulted, so a protocol's trace tree does
 * not depend on which async hook happened to be active.
 *
 * `span.context` is returned whenever the span has a valid span context — sampled or not — so the
 * head-sampling decision (the sampled flag) travels with the request and downstream processes make
 * the same choice. It is `undefined` only for spans the SDK did not create at all (no-op tracer).
 *
 * Without `defer` every span goes through the SDK (the sampler in sampling.ts then records the
 * unsampled ones the tail rule may keep). With it, head sampling is decided here, before the SDK:
 * at 1 % sampling 99 % of lock operations are unsampled, and an SDK span for each (random hex ids,
 * attribute sanitising, clock reads, processor calls) was most of tracing's cost per operation.
 * - a sampled parent's child, and a root whose trace id the ratio samples: the SDK, as before (a
 *   root's ids are drawn here, its decision made on them, and pinned for the SDK to use);
 * - an unsampled root, or a `lock.*`/`recovery.*` child of an unsampled parent: a
 *   {@link DeferredSpan}, which reaches the SDK only if the tail rule keeps it;
 * - any other child of an unsampled parent: an {@link UnsampledSpan}, ids only.
 * docs/decisions/0021-deferred-unsampled-spans.md says why it is built this way.
 */
export function createOtelTrace(tracer: Tracer, defer?: DeferUnsampled): Trace {
  if (!defer) return { startSpan: (name, options = {}) => sdkSpan(tracer, name, options, parentContext(options.parent)) };
  const { ids, rootUpperBound } = defer;
  const words = ids.words;
  return {
    startSpan(name: string, options: StartSpanOptions = {}): Span {
      const parent = options.parent ? toRemoteSpanContext(options.parent) : undefined;
      if (parent) {
        if ((parent.traceFlags & TraceFlags.SAMPLED) !== 0) return sdkSpan(tracer, name, options, otelTraceApi.setSpanContext(ROOT_CONTEXT, parent));
        const hi = words();
        const lo = spanIdLow(hi, words());
        return isTailCandidate(name) ? new DeferredSpan(defer, name, options, parent, hi, lo) : new UnsampledSpan(parent.traceId, hi, lo);
      }
      // A root: span id, then trace id, as the SDK draws them.
      const hi = words();
      const lo = spanIdLow(hi, words());
      const w0 = words();
      const w1 = words();
      const w2 = words();
      const w3 = traceIdLast(w0, w1, w2, words());
      if (!ratioSamples(rootUpperBound, w0, w1, w2, w3)) return new DeferredSpan(defer, name, options, undefined, hi, lo, w0, w1, w2, w3);
      ids.pin(hex32(hi) + hex32(lo), hex32(w0) + hex32(w1) + hex32(w2) + hex32(w3));
      try {
        return sdkSpan(tracer, name, options, ROOT_CONTEXT);
      } finally {
        ids.unpin();
      }
    },
  };
}

function sdkSpan(tracer: Tracer, name: string, options: StartSpanOptions, parent: Context): Span {
  const links: Link[] = [];
  for (const ref of options.links ?? []) {
    const context = toRemoteSpanContext(ref);
    if (context) links.push({ context });
  }
  const otelSpan = tracer.startSpan(name, { links, ...(options.attributes ? { attributes: { ...options.attributes } } : {}) }, parent);
  return new OtelBackedSpan(otelSpan);
}

function parentContext(parent: SpanContextRef | undefined): Context {
  const context = parent ? toRemoteSpanContext(parent) : undefined;
  return context ? otelTraceApi.setSpanContext(ROOT_CONTEXT, context) : ROOT_CONTEXT;
}

class OtelBackedSpan implements Span {
  readonly context: SpanContextRef | undefined;

  constructor(private readonly span: OtelSpan) {
    this.context = fromSpanContext(span.spanContext());
  }

  setAttribute(key: string, value: SpanAttributeValue): void {
    this.span.setAttribute(key, value);
  }

  addLink(context: SpanContextRef, attributes?: Record<string, SpanAttributeValue>): void {
    const remote = toRemoteSpanContext(context);
    if (!remote) return;
    this.span.addLink(attributes ? { context: remote, attributes: { ...attributes } } : { context: remote });
  }

  recordError(error: unknown): void {
    const message = errorMessage(error);
    this.span.recordException(exceptionOf(error, message));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

/** True when the head sampler chose to sample the span. */
export function isSampled(ref: SpanContextRef): boolean {
  return (ref.traceFlags & TraceFlags.SAMPLED) !== 0;
}
