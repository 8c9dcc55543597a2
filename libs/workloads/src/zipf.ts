import type { Random } from '@lockfabric/ports';
import { KeyedPermutation } from './scramble.js';

export interface ZipfOptions {
  /** Number of items; samples are in [0, items). */
  readonly items: number;
  /** Exponent θ ≥ 0: P(rank k) ∝ 1 / k^θ for k = 1 … items. 0 is uniform. */
  readonly theta: number;
  /** Relabel ranks through a keyed permutation so hot items are spread over [0, items). */
  readonly scrambled?: boolean;
  /** Key of the scrambling permutation: clients that must agree on the hot items share it. */
  readonly scrambleSeed?: number;
}

/**
 * Zipfian sampler over [0, items), YCSB's request distribution, by rejection-inversion
 * (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates from monotone discrete
 * distributions", 1996). It inverts the integral H of the continuous density x^-θ, and accepts
 * a candidate rank with a cheap test that almost always passes, so:
 *
 * - it is exact for every θ > 0, including θ = 1 and θ > 1, where YCSB's own generator (Gray et
 *   al.'s approximation, which needs ζ(n)) is restricted to θ < 1 and costs O(n) to set up;
 * - setup is O(1) and memory constant, so 10 million items cost nothing;
 * - a sample takes O(1) expected time (fewer than 1.1 candidates on average for the θ in use).
 *
 * Without scrambling, rank 1 (the hottest) is item 0, rank 2 item 1, and so on.
 */
export class ZipfianGenerator {
  readonly items: number;
  readonly theta: number;
  private readonly hIntegralX1: number;
  private readonly hIntegralN: number;
  private readonly acceptBound: number;
  private readonly permutation: KeyedPermutation | undefined;

  constructor(options: ZipfOptions) {
    const { items, theta } = options;
    if (!Number.isSafeInteger(items) || items < 1) throw new RangeError(`zipf items must be a whole number ≥ 1, got ${items}`);
    if (!Number.isFinite(theta) || theta < 0) throw new RangeError(`zipf θ must be a finite number ≥ 0, got ${theta}`);
    this.items = items;
    this.theta = theta;
    this.hIntegralX1 = this.hIntegral(1.5) - 1;
    this.hIntegralN = this.hIntegral(items + 0.5);
    this.acceptBound = 2 - this.hIntegralInverse(this.hIntegral(2.5) - this.h(2));
    this.permutation = options.scrambled ? new KeyedPermutation(items, options.scrambleSeed ?? 0) : undefined;
  }

  /** One item in [0, items). */
  next(random: Random): number {
    const rank = this.nextRank(random) - 1;
    return this.permutation ? this.permutation.apply(rank) : rank;
  }

  /** One rank in [1, items], 1 the most frequent. */
  nextRank(random: Random): number {
    if (this.theta === 0) return 1 + random.int(this.items);
    if (this.items === 1) return 1;
    for (;;) {
      // u is uniform over (H(1.5) - 1, H(n + 0.5)]: the area under the hat function.
      const u = this.hIntegralN + random.next() * (this.hIntegralX1 - this.hIntegralN);
      const x = this.hIntegralInverse(u);
      let k = Math.floor(x + 0.5);
      if (k < 1) k = 1;
      else if (k > this.items) k = this.items;
      // Accept when x is close enough to k (always inside the area of rank k), else test exactly.
      if (k - x <= this.acceptBound || u >= this.hIntegral(k + 0.5) - this.h(k)) return k;
    }
  }

  /** Probability of rank k under this distribution, summing the normaliser directly: O(items), for tests and reports. */
  probabilityOfRank(rank: number): number {
    let total = 0;
    for (let k = this.items; k >= 1; k--) total += this.h(k);
    return this.h(rank) / total;
  }

  /** Density x^-θ. */
  private h(x: number): number {
    return Math.exp(-this.theta * Math.log(x));
  }

  /** H(x) = ∫₁ˣ t^-θ dt = (x^(1-θ) - 1) / (1-θ), and ln x at θ = 1, written to stay accurate near θ = 1. */
  private hIntegral(x: number): number {
    const logX = Math.log(x);
    return expm1OverX((1 - this.theta) * logX) * logX;
  }

  private hIntegralInverse(y: number): number {
    let t = y * (1 - this.theta);
    if (t < -1) t = -1; // rounding can step just outside the domain at the far end
    return Math.exp(log1pOverX(t) * y);
  }
}

/** expm1(x) / x, continuous at 0. */
function expm1OverX(x: number): number {
  return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x / 2 + (x * x) / 6;
}

/** log1p(x) / x, continuous at 0. */
function log1pOverX(x: number): number {
  return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x / 2 + (x * x) / 3;
}
