import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, isSpanContextValid, trace as otelTraceApi } from '@opentelemetry/api';
import type { Context, Link, SpanContext, Span as OtelSpan, Tracer } from '@opentelemetry/api';
import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace } from '@lockfabric/ports';

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
 */
export function createOtelTrace(tracer: Tracer): Trace {
  return {
    startSpan(name: string, options: StartSpanOptions = {}): Span {
      const links: Link[] = [];
      for (const ref of options.links ?? []) {
        const context = toRemoteSpanContext(ref);
        if (context) links.push({ context });
      }
      const otelSpan = tracer.startSpan(
        name,
        { links, ...(options.attributes ? { attributes: { ...options.attributes } } : {}) },
        parentContext(options.parent),
      );
      return new OtelBackedSpan(otelSpan);
    },
  };
}

/** The OpenTelemetry span context for a port reference, marked remote; `undefined` if invalid. */
export function toRemoteSpanContext(ref: SpanContextRef): SpanContext | undefined {
  const context = { traceId: ref.traceId, spanId: ref.spanId, traceFlags: ref.traceFlags, isRemote: true };
  const flagsFit = Number.isInteger(ref.traceFlags) && ref.traceFlags >= 0 && ref.traceFlags <= 0xff;
  return flagsFit && isSpanContextValid(context) ? context : undefined;
}

/** The port reference for an OpenTelemetry span context; `undefined` if invalid. */
export function fromSpanContext(context: SpanContext): SpanContextRef | undefined {
  if (!isSpanContextValid(context)) return undefined;
  return { traceId: context.traceId, spanId: context.spanId, traceFlags: context.traceFlags & 0xff };
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
    if (error instanceof Error) this.span.recordException(error);
    else this.span.recordException({ name: 'NonError', message });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    this.span.end();
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** True when the head sampler chose to sample the span. */
export function isSampled(ref: SpanContextRef): boolean {
  return (ref.traceFlags & TraceFlags.SAMPLED) !== 0;
}
