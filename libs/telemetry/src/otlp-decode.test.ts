import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { describe, expect, it } from 'vitest';
import { decodeTraceRequestJson, decodeTraceRequestProtobuf, OtlpDecodeError } from '@lockfabric/testkit';
import { createInMemoryTelemetry } from './setup.js';

async function exportedBytes(): Promise<{ bytes: Uint8Array; traceId: string; spanId: string; parentId: string }> {
  const telemetry = createInMemoryTelemetry({ serviceName: 'svc' });
  const parent = telemetry.trace.startSpan('lock.acquire');
  const child = telemetry.trace.startSpan('verb.read', {
    parent: parent.context,
    links: [parent.context!],
    attributes: { s: 'x', i: -3, d: 1.25, b: false },
  });
  child.end();
  parent.end();
  const bytes = ProtobufTraceSerializer.serializeRequest(telemetry.spans())!;
  await telemetry.shutdown();
  return { bytes, traceId: parent.context!.traceId, spanId: child.context!.spanId, parentId: parent.context!.spanId };
}

describe('OTLP protobuf decoding', () => {
  it('decodes what the OpenTelemetry serializer writes', async () => {
    const { bytes, traceId, spanId, parentId } = await exportedBytes();
    const [child, parent] = decodeTraceRequestProtobuf(bytes);
    expect(child).toMatchObject({ serviceName: 'svc', scope: '@lockfabric/telemetry', name: 'verb.read', traceId, spanId, parentSpanId: parentId });
    expect(child?.attributes).toEqual({ s: 'x', i: -3, d: 1.25, b: false });
    expect(child?.links).toEqual([{ traceId, spanId: parentId, attributes: {} }]);
    expect(parent).toMatchObject({ name: 'lock.acquire', spanId: parentId, parentSpanId: '' });
  });

  it('rejects every truncation of a valid body', async () => {
    const { bytes } = await exportedBytes();
    // Cutting inside the outer length-delimited field always leaves a length that overruns the input.
    for (let cut = 1; cut < bytes.length; cut += 7) {
      expect(() => decodeTraceRequestProtobuf(bytes.subarray(0, cut))).toThrow(OtlpDecodeError);
    }
  });

  it('rejects a mistyped field and an unterminated group', () => {
    // resource_spans (field 1) sent as a varint whose value overruns the input when read as a length
    // (protobuf-es does not check a message field's wire type, so [0x08, 0x00] reads as an empty one).
    expect(() => decodeTraceRequestProtobuf(new Uint8Array([0x08, 0x01]))).toThrow(/bad OTLP trace protobuf/);
    // field 2 with wire type 3 (start group) and no end.
    expect(() => decodeTraceRequestProtobuf(new Uint8Array([0x13]))).toThrow(OtlpDecodeError);
    expect(decodeTraceRequestProtobuf(new Uint8Array())).toEqual([]);
  });

  it('rejects malformed JSON shapes', () => {
    expect(() => decodeTraceRequestJson('nope')).toThrow(OtlpDecodeError);
    expect(() => decodeTraceRequestJson('[]')).toThrow(/bad OTLP trace JSON: cannot decode message/);
    expect(() => decodeTraceRequestJson('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":""}]}]}]}')).toThrow(/traceId is not hex/);
    expect(decodeTraceRequestJson('{}')).toEqual([]);
  });
});
