import type { Random } from '@lockfabric/ports';

/** The additive step of splitmix32 (2^32 divided by the golden ratio). */
export const GOLDEN_GAMMA_32 = 0x9e3779b9;

/** A 32-bit avalanche mix (the MurmurHash3 finaliser), also splitmix32's output function. */
export function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * splitmix32: one add and one mix per draw. Cheap to seed from any 32-bit value, so it seeds
 * {@link SeededRandom} and drives streams that must depend on nothing but their own seed.
 */
export class SplitMix32 implements Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  nextU32(): number {
    this.state = (this.state + GOLDEN_GAMMA_32) >>> 0;
    return fmix32(this.state);
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}
