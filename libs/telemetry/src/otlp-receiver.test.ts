import { gzipSync } from 'node:zlib';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTR_CLIENT, ATTR_LINK_ROLE, ATTR_LOCK_ID, LINK_ROLE_VALUE_PREVIOUS_HOLDER, SPAN_LOCK_ACQUIRE, SPAN_LOCK_HANDOVER } from './semconv.js';
import { createInMemoryTelemetry, initTelemetry } from './setup.js';
import { startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver } from '@lockfabric/testkit';
import { parseTraceParent } from '@opentelemetry/core';

const WAIT_MS = 15_000;

describe('OTLP/HTTP receiver', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('receives spans from the real OTLP protobuf exporter of two services, with parents and links', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint };
    const compute = initTelemetry({ serviceName: 'compute-node', serviceInstanceId: 'cn-1', env });
    const memory = initTelemetry({ serviceName: 'memory-node', env });
    expect(compute.enabled).toBe(true);

    const acquire = compute.trace.startSpan(SPAN_LOCK_ACQUIRE, { attributes: { [ATTR_LOCK_ID]: 42, [ATTR_CLIENT]: '1/3' } });
    // The context crosses the process boundary as a traceparent header.
    const { traceId, spanId, traceFlags } = acquire.context!;
    const header = `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
    const handover = memory.trace.startSpan(SPAN_LOCK_HANDOVER, { parent: parseTraceParent(header) ?? undefined });
    handover.addLink(acquire.context!, { [ATTR_LINK_ROLE]: LINK_ROLE_VALUE_PREVIOUS_HOLDER });
    handover.end();
    acquire.end();
    await Promise.all([compute.shutdown(), memory.shutdown()]);

    const spans = await receiver.waitForSpans((received) => received.length >= 2, WAIT_MS);
    const byName = new Map(spans.map((span) => [span.name, span]));
    const a = byName.get(SPAN_LOCK_ACQUIRE);
    const h = byName.get(SPAN_LOCK_HANDOVER);
    expect(a).toMatchObject({ serviceName: 'compute-node', traceId: acquire.context?.traceId, spanId: acquire.context?.spanId, parentSpanId: '' });
    expect(a?.attributes).toEqual({ [ATTR_LOCK_ID]: 42, [ATTR_CLIENT]: '1/3' });
    expect(a?.resource['service.instance.id']).toBe('cn-1');
    expect(a?.resource['service.namespace']).toBe('lockfabric');
    expect(h).toMatchObject({ serviceName: 'memory-node', traceId: acquire.context?.traceId, parentSpanId: acquire.context?.spanId });
    expect(h?.links).toEqual([
      { traceId: acquire.context?.traceId, spanId: acquire.context?.spanId, attributes: { [ATTR_LINK_ROLE]: LINK_ROLE_VALUE_PREVIOUS_HOLDER } },
    ]);
    expect(receiver.rejectedRequests).toBe(0);
  });

  it('accepts OTLP/JSON and gzip-encoded bodies', async () => {
    const telemetry = createInMemoryTelemetry({ serviceName: 'driver' });
    const span = telemetry.trace.startSpan('verb.cas', { attributes: { big: 2 ** 40, ratio: 0.5, ok: true, list: 'x' } });
    span.recordError(new Error('boom'));
    span.end();
    const json = JsonTraceSerializer.serializeRequest(telemetry.spans());
    const proto = ProtobufTraceSerializer.serializeRequest(telemetry.spans());
    const post = (body: Uint8Array, headers: Record<string, string>) => fetch(receiver.tracesUrl, { method: 'POST', body, headers });

    expect((await post(json!, { 'content-type': 'application/json' })).status).toBe(200);
    expect((await post(gzipSync(proto!), { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })).status).toBe(200);
    await telemetry.shutdown();

    const [fromJson, fromProto] = await receiver.waitForSpans((spans) => spans.length === 2, WAIT_MS);
    expect(fromJson).toEqual(fromProto);
    expect(fromJson).toMatchObject({ serviceName: 'driver', name: 'verb.cas', statusCode: 2, statusMessage: 'boom', kind: 1 });
    expect(fromJson?.attributes).toEqual({ big: 2 ** 40, ratio: 0.5, ok: true, list: 'x' });
    expect(fromJson!.endTimeUnixNano >= fromJson!.startTimeUnixNano).toBe(true);
  });

  it('refuses malformed bodies, wrong content types, paths and methods, and keeps serving', async () => {
    const garbage = new Uint8Array([0x0a, 0xff, 0x01]);
    expect((await fetch(receiver.tracesUrl, { method: 'POST', body: garbage, headers: { 'content-type': 'application/x-protobuf' } })).status).toBe(400);
    expect((await fetch(receiver.tracesUrl, { method: 'POST', body: '{"resourceSpans":3}', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await fetch(receiver.tracesUrl, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await fetch(`${receiver.endpoint}/v1/logs`, { method: 'POST', body: '' })).status).toBe(404);
    expect((await fetch(receiver.tracesUrl)).status).toBe(405);
    expect(receiver.rejectedRequests).toBe(3);
    expect(receiver.spans).toEqual([]);
    const ok = await fetch(receiver.tracesUrl, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(ok.status).toBe(200);
  });

  it('waitForSpans rejects on timeout, naming what arrived', async () => {
    await expect(receiver.waitForSpans((spans) => spans.length > 0, 10)).rejects.toThrow(/received spans: none/);
  });
});
