import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace } from '@lockfabric/ports';

export interface RecordedSpan {
  readonly name: string;
  readonly context: SpanContextRef;
  readonly parent: SpanContextRef | undefined;
  readonly attributes: Record<string, SpanAttributeValue>;
  readonly links: { readonly context: SpanContextRef; readonly attributes?: Record<string, SpanAttributeValue> }[];
  ended: boolean;
}

/** An in-memory Trace port: keeps every span, ids counted up so runs compare. */
export class RecordingTrace implements Trace {
  readonly spans: RecordedSpan[] = [];
  private counter = 0;

  startSpan(name: string, options: StartSpanOptions = {}): Span {
    const spanId = (++this.counter).toString(16).padStart(16, '0');
    const context: SpanContextRef = { traceId: options.parent?.traceId ?? spanId.padStart(32, '0'), spanId, traceFlags: 1 };
    const span: RecordedSpan = { name, context, parent: options.parent, attributes: { ...options.attributes }, links: (options.links ?? []).map((c) => ({ context: c })), ended: false };
    this.spans.push(span);
    return {
      context,
      setAttribute: (k, v) => void (span.attributes[k] = v),
      addLink: (c, attributes) => void span.links.push(attributes ? { context: c, attributes } : { context: c }),
      recordError: () => undefined,
      end: () => void (span.ended = true),
    };
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }
}
