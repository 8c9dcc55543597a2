import { headers, type MsgHdrs, type PublishOptions } from '@nats-io/transport-node';
import type { SpanContextRef } from '@lockfabric/ports';
import { TRACEPARENT_HEADER, formatTraceparent, parseTraceparent } from '@lockfabric/wire';

export { TRACEPARENT_HEADER };

/** Publish options carrying `trace` as a NATS header; undefined (no header block at all) without one. */
export function tracePublishOptions(trace: SpanContextRef | undefined): PublishOptions | undefined {
  if (trace === undefined) return undefined;
  const hdrs = headers();
  hdrs.set(TRACEPARENT_HEADER, formatTraceparent(trace));
  return { headers: hdrs };
}

/** The trace context of a received NATS message's headers; undefined when absent or invalid. */
export function traceFromHeaders(hdrs: MsgHdrs | undefined): SpanContextRef | undefined {
  return parseTraceparent(hdrs?.get(TRACEPARENT_HEADER));
}
