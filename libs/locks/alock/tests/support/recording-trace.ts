import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace } from '@lockfabric/ports';

export interface RecordedSpan {
  readonly name: string;
  readonly context: SpanContextRef;
  readonly parent: SpanContextRef | undefined;
  readonly attributes: Record<string, SpanAttributeValue>;
  readonly links: { context: SpanContextRef; attributes?: Record<string, SpanAttributeValue> }[];
  ended: boolean;
}

/** A Trace that keeps every span, with sequential ids, so tests can follow links between spans. */
export class RecordingTrace implements Trace {
  readonly spans: RecordedSpan[] = [];
  private nextId = 1;

  startSpan(name: string, options: StartSpanOptions = {}): Span {
    const id = this.nextId++;
    const context: SpanContextRef = {
      traceId: options.parent?.traceId ?? id.toString(16).padStart(32, 'a'),
      spanId: id.toString(16).padStart(16, '0'),
      traceFlags: 1,
    };
    const recorded: RecordedSpan = { name, context, parent: options.parent, attributes: { ...options.attributes }, links: [], ended: false };
    this.spans.push(recorded);
    return {
      context,
      setAttribute: (key, value) => void (recorded.attributes[key] = value),
      addLink: (link, attributes) => void recorded.links.push({ context: link, ...(attributes ? { attributes } : {}) }),
      recordError: () => undefined,
      end: () => void (recorded.ended = true),
    };
  }
}
