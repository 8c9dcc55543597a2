import { describe, expect, it } from 'vitest';
import { formatTraceparent, isValidSpanContext, parseTraceparent } from './traceparent.js';

// The one W3C traceparent codec (telemetry, NATS headers, gRPC metadata and the wire messages).

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('formats version 00 with two-digit flags', () => {
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 })).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0 })).toBe(`00-${TRACE_ID}-${SPAN_ID}-00`);
  });

  it('round-trips a span context', () => {
    const ref = { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 0x03 };
    expect(parseTraceparent(formatTraceparent(ref))).toEqual(ref);
  });

  it('refuses to format an invalid reference', () => {
    expect(() => formatTraceparent({ traceId: '0'.repeat(32), spanId: SPAN_ID, traceFlags: 1 })).toThrow(RangeError);
    expect(() => formatTraceparent({ traceId: TRACE_ID, spanId: 'xyz', traceFlags: 1 })).toThrow(RangeError);
    expect(() => formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 256 })).toThrow(RangeError);
    expect(isValidSpanContext({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1.5 })).toBe(false);
  });

  it('tolerates surrounding whitespace', () => {
    expect(parseTraceparent(`  00-${TRACE_ID}-${SPAN_ID}-01 `)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
  });

  it('reads future versions by their first four fields', () => {
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01-what-the-future-holds`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-01`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: 1 });
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['empty', ''],
    ['garbage', 'hello world'],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['trailing data on version 00', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ['uppercase hex', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['short trace id', `00-${TRACE_ID.slice(2)}-${SPAN_ID}-01`],
    ['long span id', `00-${TRACE_ID}-${SPAN_ID}00-01`],
    ['non-hex flags', `00-${TRACE_ID}-${SPAN_ID}-0g`],
    ['one-digit version', `0-${TRACE_ID}-${SPAN_ID}-01`],
    ['missing flags', `00-${TRACE_ID}-${SPAN_ID}`],
    ['wrong separators', `00_${TRACE_ID}_${SPAN_ID}_01`],
    ['future version glued field', `cc-${TRACE_ID}-${SPAN_ID}-01x`],
  ])('rejects %s without throwing', (_label, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });
});
