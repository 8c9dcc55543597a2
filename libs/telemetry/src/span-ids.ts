import type { IdGenerator } from '@opentelemetry/sdk-trace-base';

/**
 * Where span and trace ids come from, 32 random bits per call. A span id is two calls, a trace id
 * four, drawn in the SDK's order (span id, then trace id for a root). Tests pass a seeded source so
 * that two pipelines started alike give the same ids.
 */
export type IdWords = () => number;

export const randomIdWords: IdWords = () => (Math.random() * 2 ** 32) >>> 0;

const HEX_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * Lowercase hex of 32 bits, eight digits: W3C ids are lowercase. By table: `toString(16)` of a
 * number above 2^31 takes V8's slow path (about 0.5 µs a call, 4 µs of every traced operation).
 */
export function hex32(word: number): string {
  return HEX_BYTE[word >>> 24]! + HEX_BYTE[(word >>> 16) & 0xff]! + HEX_BYTE[(word >>> 8) & 0xff]! + HEX_BYTE[word & 0xff]!;
}

/**
 * The ids the SDK asks for, from an {@link IdWords} source, unless a span's ids were drawn before
 * the SDK was called: `pin` hands them to the next `generateSpanId`/`generateTraceId`. That is how
 * a head-sampled root keeps the trace id its decision was made on, and how a deferred span that the
 * tail rule keeps is exported under the ids it has shown already (links and propagated contexts
 * name them).
 */
export class PinnedIdGenerator implements IdGenerator {
  private pinnedSpanId: string | undefined;
  private pinnedTraceId: string | undefined;

  constructor(readonly words: IdWords = randomIdWords) {}

  pin(spanId: string, traceId: string | undefined): void {
    this.pinnedSpanId = spanId;
    this.pinnedTraceId = traceId;
  }

  unpin(): void {
    this.pinnedSpanId = undefined;
    this.pinnedTraceId = undefined;
  }

  generateSpanId(): string {
    const pinned = this.pinnedSpanId;
    if (pinned !== undefined) {
      this.pinnedSpanId = undefined;
      return pinned;
    }
    const hi = this.words();
    return hex32(hi) + hex32(spanIdLow(hi, this.words()));
  }

  generateTraceId(): string {
    const pinned = this.pinnedTraceId;
    if (pinned !== undefined) {
      this.pinnedTraceId = undefined;
      return pinned;
    }
    const w0 = this.words();
    const w1 = this.words();
    const w2 = this.words();
    return hex32(w0) + hex32(w1) + hex32(w2) + hex32(traceIdLast(w0, w1, w2, this.words()));
  }
}

/** An all-zero id is invalid: like the SDK's generator, its last byte becomes 1. */
export function spanIdLow(hi: number, lo: number): number {
  return hi === 0 && lo === 0 ? 1 : lo;
}

export function traceIdLast(w0: number, w1: number, w2: number, w3: number): number {
  return w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 ? 1 : w3;
}

/**
 * The bound `TraceIdRatioBasedSampler` compares a trace id against, for `ratio`: the sampler XORs
 * the id's four 32-bit words and samples when the result is below it. Kept in step with
 * `@opentelemetry/sdk-trace` 2.x (span-ids.test.ts checks it against the sampler itself).
 */
export function ratioUpperBound(ratio: number): number {
  const normalised = typeof ratio !== 'number' || Number.isNaN(ratio) ? 0 : ratio >= 1 ? 1 : ratio <= 0 ? 0 : ratio;
  return normalised === 1 ? 0x100000000 : Math.floor(normalised * 0xffffffff);
}

/** The ratio sampler's decision for the trace id made of these words, without the hex string. */
export function ratioSamples(upperBound: number, w0: number, w1: number, w2: number, w3: number): boolean {
  return (w0 ^ w1 ^ w2 ^ w3) >>> 0 < upperBound;
}

/** A seeded {@link IdWords} (splitmix32), for tests that compare two pipelines span for span. */
export function seededIdWords(seed: number): IdWords {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}
