import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace as otelTraceApi } from '@opentelemetry/api';
import type { Attributes, HrTime, Link, SpanContext, Tracer } from '@opentelemetry/api';
import { addHrTimes, hrTimeDuration, hrTimeToNanoseconds, millisToHrTime, otperformance } from '@opentelemetry/core';
import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions } from '@lockfabric/ports';
import { errorMessage, exceptionOf, toRemoteSpanContext } from './span-context.js';
import { hex32 } from './span-ids.js';
import type { PinnedIdGenerator } from './span-ids.js';
import { unsampledVerdict } from './tail-keep-processor.js';
import type { TailRule } from './tail-keep-processor.js';

/** What a deferred span needs to become an SDK span when the tail rule keeps it. */
export interface DeferredExport {
  readonly tracer: Tracer;
  readonly ids: PinnedIdGenerator;
  readonly rule: TailRule;
}

interface DeferredLink {
  readonly ref: SpanContextRef;
  readonly attributes?: Record<string, SpanAttributeValue>;
}

interface RecordedError {
  readonly error: unknown;
  readonly message: string;
  /** `otperformance.now()` when it was recorded. */
  readonly perfMs: number;
}

/**
 * A span head sampling did not sample that the tail rule may still keep (an unsampled root, or a
 * `lock.*`/`recovery.*` span under an unsampled parent). It only remembers what the SDK span would
 * have held: start time, attributes in order, links, errors with their times. Its ids are drawn at
 * start (the SDK's draw order) but written out as hex only when `context` is first read. `end()`
 * applies the tail rule; a kept span is then replayed into the SDK under the same ids, parent and
 * times, so the exporting processor receives what the eager path would have given it. A dropped
 * one (nearly all of them) never touches the SDK.
 */
export class DeferredSpan implements Span {
  // The SDK's clock reads, in its order: a wall-clock start in ms, then the monotonic clock that
  // times events and the end from it.
  private readonly startMs = Date.now();
  private readonly startPerfMs = otperformance.now();
  /**
   * Key, value, key, value… in the order set, start attributes first. Not an object: adding keys
   * to a copy of the start attributes (`{ ...attributes }`) cost 0.5–2 µs a key in V8.
   */
  private readonly attributes: (string | SpanAttributeValue)[] = [];
  private links: DeferredLink[] | undefined;
  private errors: RecordedError[] | undefined;
  private ended = false;
  private spanContext: SpanContextRef | undefined;

  constructor(
    private readonly out: DeferredExport,
    private readonly name: string,
    options: StartSpanOptions,
    /** A valid, unsampled, remote parent; `undefined` for a root. */
    private readonly parent: SpanContext | undefined,
    private readonly spanHi: number,
    private readonly spanLo: number,
    private readonly trace0 = 0,
    private readonly trace1 = 0,
    private readonly trace2 = 0,
    private readonly trace3 = 0,
  ) {
    const start = options.attributes;
    if (start) for (const key in start) if (Object.hasOwn(start, key)) this.attributes.push(key, start[key]!);
    if (options.links && options.links.length > 0) this.links = options.links.map((ref) => ({ ref }));
  }

  get context(): SpanContextRef {
    return (this.spanContext ??= {
      traceId: this.parent ? this.parent.traceId : hex32(this.trace0) + hex32(this.trace1) + hex32(this.trace2) + hex32(this.trace3),
      spanId: hex32(this.spanHi) + hex32(this.spanLo),
      traceFlags: TraceFlags.NONE,
    });
  }

  setAttribute(key: string, value: SpanAttributeValue): void {
    // The SDK ignores null values and anything set after the end.
    if (this.ended || value == null) return;
    this.attributes.push(key, value);
  }

  addLink(context: SpanContextRef, attributes?: Record<string, SpanAttributeValue>): void {
    if (this.ended) return;
    (this.links ??= []).push(attributes ? { ref: context, attributes: { ...attributes } } : { ref: context });
  }

  recordError(error: unknown): void {
    if (this.ended) return;
    (this.errors ??= []).push({ error, message: errorMessage(error), perfMs: otperformance.now() });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    const endPerfMs = otperformance.now();
    const status = this.errors ? SpanStatusCode.ERROR : SpanStatusCode.UNSET;
    const verdict = unsampledVerdict(this.name, status, (key) => this.attribute(key), () => this.durationNs(endPerfMs), this.out.rule);
    if (verdict !== 'drop') this.replay(endPerfMs);
  }

  /** The value last set for `key`. */
  private attribute(key: string): SpanAttributeValue | undefined {
    const { attributes } = this;
    for (let at = attributes.length - 2; at >= 0; at -= 2) if (attributes[at] === key) return attributes[at + 1];
    return undefined;
  }

  /** The SDK's times: the start in ms, later times that start plus the monotonic clock's advance. */
  private timeAt(perfMs: number): HrTime {
    return addHrTimes(millisToHrTime(this.startMs), millisToHrTime(perfMs - this.startPerfMs));
  }

  private durationNs(endPerfMs: number): number {
    const duration = hrTimeDuration(millisToHrTime(this.startMs), this.timeAt(endPerfMs));
    return duration[0] < 0 ? 0 : hrTimeToNanoseconds(duration);
  }

  /** Makes the SDK span the eager path would have made, call for call, with the recorded times. */
  private replay(endPerfMs: number): void {
    const { tracer, ids } = this.out;
    const context = this.context;
    const links: Link[] = [];
    for (const link of this.links ?? []) {
      const remote = toRemoteSpanContext(link.ref);
      if (remote) links.push(link.attributes ? { context: remote, attributes: link.attributes } : { context: remote });
    }
    // Later values replace earlier ones in place, as the SDK's setAttribute does.
    const attributes: Attributes = {};
    for (let at = 0; at < this.attributes.length; at += 2) attributes[this.attributes[at] as string] = this.attributes[at + 1];
    const parentContext = this.parent ? otelTraceApi.setSpanContext(ROOT_CONTEXT, this.parent) : ROOT_CONTEXT;
    ids.pin(context.spanId, this.parent ? undefined : context.traceId);
    let span;
    try {
      span = tracer.startSpan(this.name, { links, attributes, startTime: millisToHrTime(this.startMs) }, parentContext);
    } finally {
      ids.unpin();
    }
    for (const recorded of this.errors ?? []) {
      span.recordException(exceptionOf(recorded.error, recorded.message), this.timeAt(recorded.perfMs));
      span.setStatus({ code: SpanStatusCode.ERROR, message: recorded.message });
    }
    span.end(this.timeAt(endPerfMs));
  }
}

/**
 * A span under an unsampled parent that nothing will export (verbs, packets): it only carries the
 * parent's trace id, its own span id and the unsampled flags, as the SDK's non-recording span did.
 */
export class UnsampledSpan implements Span {
  private spanContext: SpanContextRef | undefined;

  constructor(
    private readonly traceId: string,
    private readonly spanHi: number,
    private readonly spanLo: number,
  ) {}

  get context(): SpanContextRef {
    return (this.spanContext ??= { traceId: this.traceId, spanId: hex32(this.spanHi) + hex32(this.spanLo), traceFlags: TraceFlags.NONE });
  }

  setAttribute(): void {}
  addLink(): void {}
  recordError(): void {}
  end(): void {}
}
