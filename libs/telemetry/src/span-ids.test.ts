import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { PinnedIdGenerator, hex32, ratioSamples, ratioUpperBound, seededIdWords, traceIdLast } from './span-ids.js';

const sdkSamples = (ratio: number, traceId: string) =>
  new TraceIdRatioBasedSampler(ratio).shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED;

describe('span ids drawn before the SDK', () => {
  it('decides a root as TraceIdRatioBasedSampler does for its trace id, at the bound and away from it', () => {
    const words = seededIdWords(7);
    for (const ratio of [0, 1e-9, 0.01, 0.25, 0.5, 0.999, 1]) {
      const bound = ratioUpperBound(ratio);
      // Trace ids whose words XOR to just below, at and above the bound, then random ones.
      const xors = [0, 1, bound - 1, bound, bound + 1, 0xfffffffe, 0xffffffff].filter((x) => x >= 0 && x <= 0xffffffff);
      const cases: [number, number, number, number][] = xors.map((x) => [0x12345678, 0x9abcdef0, 0x0f0f0f0f, (x ^ 0x12345678 ^ 0x9abcdef0 ^ 0x0f0f0f0f) >>> 0]);
      for (let i = 0; i < 2000; i++) cases.push([words(), words(), words(), words()]);
      for (const [w0, w1, w2, w3] of cases) {
        const traceId = hex32(w0) + hex32(w1) + hex32(w2) + hex32(w3);
        expect(ratioSamples(bound, w0, w1, w2, w3), `ratio ${ratio}, ${traceId}`).toBe(sdkSamples(ratio, traceId));
      }
    }
  });

  it('gives pinned ids once, then draws valid lowercase ids from its source', () => {
    const ids = new PinnedIdGenerator(seededIdWords(1));
    ids.pin('00f067aa0ba902b7', '4bf92f3577b34da6a3ce929d0e0e4736');
    expect(ids.generateSpanId()).toBe('00f067aa0ba902b7');
    expect(ids.generateTraceId()).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(ids.generateSpanId()).toMatch(/^[0-9a-f]{16}$/);
    expect(ids.generateTraceId()).toMatch(/^[0-9a-f]{32}$/);
    ids.pin('00f067aa0ba902b7', undefined);
    ids.unpin();
    expect(ids.generateSpanId()).not.toBe('00f067aa0ba902b7');
  });

  it('never makes an all-zero id', () => {
    const zeros = new PinnedIdGenerator(() => 0);
    expect(zeros.generateSpanId()).toBe('0000000000000001');
    expect(zeros.generateTraceId()).toBe('00000000000000000000000000000001');
    expect(traceIdLast(0, 0, 0, 0)).toBe(1);
  });
});
