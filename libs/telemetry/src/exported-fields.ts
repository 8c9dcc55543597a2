import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * Every field an exporter reads from a span, as plain data (object identity is all it leaves out):
 * what tests compare when two paths must export the same span.
 */
export function exportedFields(span: ReadableSpan) {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: span.spanContext(),
    parentSpanContext: span.parentSpanContext,
    startTime: span.startTime,
    endTime: span.endTime,
    duration: span.duration,
    ended: span.ended,
    status: span.status,
    attributes: span.attributes,
    links: span.links,
    events: span.events,
    resource: span.resource.attributes,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}
