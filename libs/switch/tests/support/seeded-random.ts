import type { Random } from '@lockfabric/ports';

/** mulberry32: a tiny seeded generator for tests (libs/sim owns the product generator). */
export class TestRandom implements Random {
  draws = 0;
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.draws++;
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}
