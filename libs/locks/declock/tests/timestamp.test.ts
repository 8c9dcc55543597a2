import { describe, expect, it } from 'vitest';
import { earlier, earliest, toTs16 } from '../src/index.js';

describe('16-bit timestamps (§3.7, invariant I13)', () => {
  it('count µs and wrap every 65.536 ms', () => {
    expect(toTs16(999)).toBe(0);
    expect(toTs16(1_000)).toBe(1);
    expect(toTs16(65_536_000)).toBe(0);
    expect(toTs16(65_537_000)).toBe(1);
  });

  it('compare correctly across the wrap for stamps within 2^15 µs of each other', () => {
    expect(earlier(10, 20)).toBe(true);
    expect(earlier(0xfff0, 0x0010)).toBe(true); // 0xfff0 was taken just before the wrap
    expect(earlier(0x0010, 0xfff0)).toBe(false);
    expect(earliest([0x0010, 0xfff0, 0x0005])).toBe(0xfff0);
    expect(earliest([])).toBeUndefined();
  });

  it('is antisymmetric and irreflexive for every pair', () => {
    for (let a = 0; a < 0x10000; a += 1021) {
      for (let b = 0; b < 0x10000; b += 1031) {
        if (a === b) expect(earlier(a, b)).toBe(false);
        else expect(earlier(a, b)).not.toBe(earlier(b, a));
      }
    }
  });

  it('agrees with true time order whenever the true gap is below 2^15 µs', () => {
    for (let t = 0; t < 200_000_000; t += 9_999_991) {
      for (const gapUs of [1, 100, 32_000]) {
        expect(earlier(toTs16(t), toTs16(t + gapUs * 1_000))).toBe(true);
      }
    }
  });
});
