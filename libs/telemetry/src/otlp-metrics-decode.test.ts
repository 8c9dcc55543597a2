import { hrTime } from '@opentelemetry/core';
import { ProtobufMetricsSerializer } from '@opentelemetry/otlp-transformer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MetricsRegistry } from './metrics.js';
import { toResourceMetrics } from './registry-producer.js';
import { decodeMetricsRequestProtobuf, OtlpDecodeError, startOtlpReceiver } from '@lockfabric/testkit';
import type { OtlpReceiver } from '@lockfabric/testkit';
import { serviceResource } from './setup.js';

function tag(field: number, wire: number): number {
  return (field << 3) | wire;
}

function fixed64(value: number): number[] {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(value), true);
  return [...bytes];
}

function double(value: number): number[] {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, value, true);
  return [...bytes];
}

function delimited(field: number, body: number[]): number[] {
  return [tag(field, 2), body.length, ...body];
}

describe('OTLP metrics protobuf decoding', () => {
  it('reads unpacked repeated bucket counts and bounds as well as packed ones', () => {
    const point = [tag(4, 1), ...fixed64(3), tag(6, 1), ...fixed64(1), tag(6, 1), ...fixed64(2), tag(7, 1), ...double(0.5)];
    const histogram = [...delimited(1, point), tag(2, 0), 2];
    const metric = [...delimited(1, [...Buffer.from('h')]), ...delimited(9, histogram)];
    const request = delimited(1, delimited(2, delimited(2, metric)));
    expect(decodeMetricsRequestProtobuf(new Uint8Array(request))).toMatchObject([
      { name: 'h', kind: 'histogram', temporality: 2, points: [{ count: 3, bucketCounts: [1, 2], explicitBounds: [0.5], sum: undefined }] },
    ]);
  });

  it('reads integer data points', () => {
    const point = [tag(6, 1), ...fixed64(42)];
    const metric = [...delimited(1, [...Buffer.from('g')]), ...delimited(5, delimited(1, point))];
    expect(decodeMetricsRequestProtobuf(new Uint8Array(delimited(1, delimited(2, delimited(2, metric)))))).toMatchObject([
      { name: 'g', kind: 'gauge', points: [{ value: 42, attributes: {} }] },
    ]);
  });

  it('rejects truncated and mistyped input with OtlpDecodeError', () => {
    const registry = new MetricsRegistry();
    registry.counter({ name: 'c_total', help: 'C.' }).inc();
    const body = ProtobufMetricsSerializer.serializeRequest(toResourceMetrics(registry.snapshot(), { resource: serviceResource('s', undefined), startTime: hrTime(), time: hrTime() }));
    expect(body).toBeDefined();
    expect(decodeMetricsRequestProtobuf(body!)).toHaveLength(1);
    expect(() => decodeMetricsRequestProtobuf(body!.subarray(0, body!.length - 3))).toThrow(OtlpDecodeError);
    // resource_metrics (field 1) sent as a varint whose value overruns the input when read as a length.
    expect(() => decodeMetricsRequestProtobuf(new Uint8Array([tag(1, 0), 1]))).toThrow(/bad OTLP metrics protobuf/);
  });
});

describe('OTLP receiver /v1/metrics', () => {
  let receiver: OtlpReceiver;
  beforeEach(async () => {
    receiver = await startOtlpReceiver();
  });
  afterEach(async () => {
    await receiver.close();
  });

  it('refuses JSON and malformed protobuf, counting them', async () => {
    const json = await fetch(receiver.metricsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    const bad = await fetch(receiver.metricsUrl, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: new Uint8Array([tag(1, 2), 9]) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/bad OTLP metrics protobuf/);
    expect(receiver.rejectedRequests).toBe(2);
    expect(receiver.metricRequests).toBe(0);
    await expect(receiver.waitForMetrics((m) => m.length > 0, 10)).rejects.toThrow(/received metrics: none/);
  });
});
