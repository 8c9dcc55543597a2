import type { Random } from '@lockfabric/ports';
import { SplitMix32 } from './splitmix32.js';

/**
 * The product generator (xoshiro128**, seeded through splitmix32). Small, fast, and identical on
 * every platform, which `sim` needs: a run is replayed from its seed alone.
 */
export class SeededRandom implements Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    const seeder = new SplitMix32(seed);
    this.a = seeder.nextU32();
    this.b = seeder.nextU32();
    this.c = seeder.nextU32();
    this.d = seeder.nextU32();
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  next(): number {
    // 53 random bits → [0, 1)
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  int(bound: number): number {
    if (!(bound > 0)) throw new RangeError(`Random.int bound must be positive, got ${bound}`);
    return Math.floor(this.next() * bound);
  }

  /** An independent generator derived from this one (for per-client streams). */
  fork(): SeededRandom {
    return new SeededRandom(this.nextU32());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
