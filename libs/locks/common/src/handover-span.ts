import type { SpanContextRef, SpanAttributeValue, Trace } from '@lockfabric/ports';

/**
 * The next holder's side of a handover: a `lock.grant` span created as a child of the releaser's
 * `lock.handover` span (whose context travelled in the message), so one trace shows the releasing
 * holder, the notification and the grant across processes. The acquire span links to it too.
 */
export function recordHandoverGrant(trace: Trace, handover: SpanContextRef, attributes: Record<string, SpanAttributeValue>): void {
  const span = trace.startSpan('lock.grant', { parent: handover, attributes });
  span.end();
}
