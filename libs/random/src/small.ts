import type { Random } from '@lockfabric/ports';

/*
 * Small generators that tests and sweeps drew their workload shapes from before there was one
 * module. Each keeps its exact sequence, so every recorded seed still replays the same case.
 */

/** mulberry32: uniform in [0, 1) per call. `seed` is taken modulo 2^32. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** mulberry32 behind the `Random` port, counting its draws (tests assert how much was consumed). */
export class Mulberry32 implements Random {
  draws = 0;
  private readonly source: () => number;

  constructor(seed: number) {
    this.source = mulberry32(seed);
  }

  next(): number {
    this.draws++;
    return this.source();
  }

  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }

  /** Integer in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
}

/** Marsaglia's xorshift32 (13, 17, 5): a raw 32-bit value per call. */
export function xorshift32(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

/** The two linear congruential generators in use: C's `rand` constants and Numerical Recipes'. */
const LCG = { ansiC: [1_103_515_245, 12_345], numericalRecipes: [1_664_525, 1_013_904_223] } as const;

/** A 32-bit LCG, uniform in [0, 1) per call (its low bits are weak: shapes only, never sim). */
export function lcg32(seed: number, variant: keyof typeof LCG): () => number {
  const [multiplier, increment] = LCG[variant];
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, multiplier) + increment) >>> 0) / 2 ** 32;
}
