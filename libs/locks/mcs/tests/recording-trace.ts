import type { Span, SpanAttributeValue, SpanContextRef, StartSpanOptions, Trace } from '@lockfabric/ports';

export interface RecordedSpan {
  readonly name: string;
  readonly context: SpanContextRef;
  readonly attributes: Record<string, SpanAttributeValue>;
  readonly links: { context: SpanContextRef; attributes?: Record<string, SpanAttributeValue> }[];
  ended: boolean;
}

/** A Trace that keeps every span, with deterministic W3C-shaped ids. */
export function recordingTrace(): Trace & { readonly spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  let counter = 0;
  return {
    spans,
    startSpan(name: string, options?: StartSpanOptions): Span {
      counter++;
      const record: RecordedSpan = {
        name,
        context: { traceId: counter.toString(16).padStart(32, 'a'), spanId: counter.toString(16).padStart(16, '0'), traceFlags: 1 },
        attributes: { ...options?.attributes },
        links: [],
        ended: false,
      };
      spans.push(record);
      return {
        context: record.context,
        setAttribute: (key, value) => void (record.attributes[key] = value),
        addLink: (context, attributes) => void record.links.push(attributes ? { context, attributes } : { context }),
        recordError: () => undefined,
        end: () => void (record.ended = true),
      };
    },
  };
}
