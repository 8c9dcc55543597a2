import { describe, expect, it } from 'vitest';
import { TestRandom } from '../tests/support/seeded-random.js';
import { KeyedPermutation } from './scramble.js';
import { ZipfianGenerator } from './zipf.js';

function histogram(zipf: ZipfianGenerator, samples: number, seed: number): Float64Array {
  const random = new TestRandom(seed);
  const counts = new Float64Array(zipf.items);
  for (let i = 0; i < samples; i++) {
    const item = zipf.next(random);
    counts[item] = (counts[item] as number) + 1;
  }
  return counts;
}

/** Least-squares slope of log(frequency) against log(rank) over ranks 1..top. */
function rankFrequencySlope(counts: Float64Array, top: number): number {
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let r = 1; r <= top; r++) {
    const x = Math.log(r);
    const y = Math.log(counts[r - 1] as number);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (top * sxy - sx * sy) / (top * sxx - sx * sx);
}

describe('ZipfianGenerator', () => {
  it('always samples inside [0, items)', () => {
    const random = new TestRandom(1);
    const outside: string[] = [];
    for (const items of [1, 2, 3, 10, 1000, 10_000_000]) {
      for (const theta of [0, 0.2, 0.5, 0.99, 1, 1.01, 1.5, 3, 10]) {
        for (const scrambled of [false, true]) {
          const zipf = new ZipfianGenerator({ items, theta, scrambled, scrambleSeed: 5 });
          for (let i = 0; i < 2000; i++) {
            const item = zipf.next(random);
            if (!(Number.isInteger(item) && item >= 0 && item < items)) outside.push(`items=${items} θ=${theta} → ${item}`);
          }
        }
      }
    }
    expect(outside).toEqual([]);
  });

  it('matches the exact rank probabilities on a small domain, for θ below, at and above 1', () => {
    const samples = 200_000;
    for (const theta of [0.5, 0.99, 1, 1.2, 2.5]) {
      const zipf = new ZipfianGenerator({ items: 10, theta });
      const counts = histogram(zipf, samples, 7);
      for (let rank = 1; rank <= 10; rank++) {
        const p = zipf.probabilityOfRank(rank);
        const observed = (counts[rank - 1] as number) / samples;
        // Five standard errors: a fixed seed makes this exact, the margin keeps it meaningful.
        expect(Math.abs(observed - p), `θ=${theta} rank=${rank}`).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / samples) + 1e-4);
      }
    }
  });

  it('has a rank-frequency slope of -θ on a log-log plot', () => {
    for (const theta of [0.5, 0.99, 1.5]) {
      const counts = histogram(new ZipfianGenerator({ items: 100_000, theta }), 300_000, 11);
      expect(Math.abs(rankFrequencySlope(counts, 30) + theta), `θ=${theta}`).toBeLessThan(0.08);
    }
  });

  it('is uniform-ish at θ = 0', () => {
    const samples = 100_000;
    const counts = histogram(new ZipfianGenerator({ items: 100, theta: 0 }), samples, 3);
    for (const count of counts) expect(Math.abs(count - samples / 100)).toBeLessThan(5 * Math.sqrt(samples / 100));
  });

  it('sets up 10 million items in constant memory and puts the mass at the head', () => {
    const zipf = new ZipfianGenerator({ items: 10_000_000, theta: 0.99 });
    const random = new TestRandom(9);
    let head = 0;
    for (let i = 0; i < 10_000; i++) if (zipf.next(random) < 100) head++;
    // Ranks 1..100 of 10 M at θ = 0.99 carry about 30% of the mass.
    expect(head / 10_000).toBeGreaterThan(0.25);
    expect(head / 10_000).toBeLessThan(0.35);
  });

  it('is deterministic for a seed', () => {
    const zipf = new ZipfianGenerator({ items: 1000, theta: 1.1, scrambled: true, scrambleSeed: 3 });
    const draw = (seed: number) => {
      const random = new TestRandom(seed);
      return Array.from({ length: 50 }, () => zipf.next(random));
    };
    expect(draw(4)).toEqual(draw(4));
    expect(draw(4)).not.toEqual(draw(5));
  });

  it('spreads the hot items when scrambled, keeping the same frequencies', () => {
    const plain = histogram(new ZipfianGenerator({ items: 1_000_000, theta: 0.99 }), 50_000, 2);
    const scrambled = histogram(new ZipfianGenerator({ items: 1_000_000, theta: 0.99, scrambled: true, scrambleSeed: 77 }), 50_000, 2);
    const permutation = new KeyedPermutation(1_000_000, 77);
    const hot = Array.from({ length: 10 }, (_, rank) => permutation.apply(rank));
    // The same draws land on permuted ids: item rank-1 of the plain run is item apply(rank-1) scrambled.
    for (let rank = 0; rank < 10; rank++) expect(scrambled[hot[rank] as number]).toBe(plain[rank]);
    expect(Math.max(...hot)).toBeGreaterThan(100_000);
    expect(new Set(hot.map((id) => Math.floor(id / 100_000))).size).toBeGreaterThan(3);
  });

  it('rejects invalid parameters', () => {
    expect(() => new ZipfianGenerator({ items: 0, theta: 1 })).toThrow(RangeError);
    expect(() => new ZipfianGenerator({ items: 1.5, theta: 1 })).toThrow(RangeError);
    expect(() => new ZipfianGenerator({ items: 10, theta: -0.1 })).toThrow(RangeError);
    expect(() => new ZipfianGenerator({ items: 10, theta: Number.NaN })).toThrow(RangeError);
  });
});

describe('KeyedPermutation', () => {
  it('is a bijection of [0, n) for awkward sizes', () => {
    for (const n of [1, 2, 3, 5, 16, 17, 1000, 4097]) {
      const permutation = new KeyedPermutation(n, 12345);
      const seen = new Set<number>();
      for (let i = 0; i < n; i++) seen.add(permutation.apply(i));
      expect(seen.size).toBe(n);
      expect(Math.min(...seen)).toBe(0);
      expect(Math.max(...seen)).toBe(n - 1);
    }
  });

  it('depends on its key', () => {
    const a = new KeyedPermutation(1 << 20, 1);
    const b = new KeyedPermutation(1 << 20, 2);
    const image = (p: KeyedPermutation) => Array.from({ length: 20 }, (_, i) => p.apply(i));
    expect(image(a)).not.toEqual(image(b));
    expect(image(a)).toEqual(image(new KeyedPermutation(1 << 20, 1)));
  });
});
