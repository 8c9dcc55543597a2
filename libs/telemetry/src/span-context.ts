import { isSpanContextValid } from '@opentelemetry/api';
import type { SpanContext } from '@opentelemetry/api';
import type { SpanContextRef } from '@lockfabric/ports';

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

/** What `Span.recordError` records: the error itself, or a stand-in for a thrown non-Error. */
export function exceptionOf(error: unknown, message: string): Error | { name: string; message: string } {
  return error instanceof Error ? error : { name: 'NonError', message };
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
