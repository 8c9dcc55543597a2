import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace } from '@lockfabric/ports';

export interface RecordedSpan {
  readonly name: string;
  readonly context: SpanContextRef;
  readonly parent?: SpanContextRef;
  readonly attributes: Record<string, SpanAttributeValue>;
  readonly links: { context: SpanContextRef; attributes?: Record<string, SpanAttributeValue> }[];
  ended: boolean;
}

/** A Trace that keeps every span in memory, with deterministic ids. */
export class RecordingTrace implements Trace {
  readonly spans: RecordedSpan[] = [];
  private next = 1;

  startSpan(name: string, options: StartSpanOptions = {}): Span {
    const id = (this.next++).toString(16).padStart(16, '0');
    const context: SpanContextRef = { traceId: options.parent?.traceId ?? id.padStart(32, '0'), spanId: id, traceFlags: 1 };
    const recorded: RecordedSpan = {
      name,
      context,
      ...(options.parent ? { parent: options.parent } : {}),
      attributes: { ...options.attributes },
      links: (options.links ?? []).map((link) => ({ context: link })),
      ended: false,
    };
    this.spans.push(recorded);
    return {
      context,
      setAttribute: (key, value) => {
        recorded.attributes[key] = value;
      },
      addLink: (link, attributes) => {
        recorded.links.push({ context: link, ...(attributes ? { attributes } : {}) });
      },
      recordError: () => undefined,
      end: () => {
        recorded.ended = true;
      },
    };
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name === name);
  }
}
