/** Serialisable W3C trace context of a span, carried in wire headers and messages. */
export interface SpanContextRef {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
}

export type SpanAttributeValue = string | number | boolean;

export interface Span {
  readonly context: SpanContextRef | undefined;
  setAttribute(key: string, value: SpanAttributeValue): void;
  addLink(context: SpanContextRef, attributes?: Record<string, SpanAttributeValue>): void;
  recordError(error: unknown): void;
  end(): void;
}

export interface StartSpanOptions {
  readonly parent?: SpanContextRef;
  readonly links?: readonly SpanContextRef[];
  readonly attributes?: Record<string, SpanAttributeValue>;
}

/** A thin span facade. Protocols use only this; the telemetry library maps it onto OpenTelemetry. */
export interface Trace {
  startSpan(name: string, options?: StartSpanOptions): Span;
}

const noopSpan: Span = {
  context: undefined,
  setAttribute() {},
  addLink() {},
  recordError() {},
  end() {},
};

export const noopTrace: Trace = { startSpan: () => noopSpan };
