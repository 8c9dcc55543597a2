import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it('allows a burst, then refills at the rate, never above the burst', () => {
    const b = new TokenBucket({ ratePerSec: 1_000_000, burst: 3 }); // one token per µs
    expect([b.tryTake(0), b.tryTake(0), b.tryTake(0), b.tryTake(0)]).toEqual([true, true, true, false]);
    expect(b.tryTake(500)).toBe(false);
    expect(b.tryTake(1000)).toBe(true);
    expect(b.available(1_000_000)).toBe(3);
    expect(b.tryTake(1_000_000, 4)).toBe(false);
    expect(b.available(1_000_000)).toBe(3);
  });

  it('reserve queues callers behind each other with the wait they owe', () => {
    const b = new TokenBucket({ ratePerSec: 1_000_000, burst: 1, startNs: 100 });
    expect(b.reserve(100)).toBe(0);
    expect(b.reserve(100)).toBe(1000);
    expect(b.reserve(100)).toBe(2000);
    expect(b.reserve(2100)).toBe(1000);
    // A clock that steps back adds no tokens.
    expect(b.available(50)).toBeCloseTo(-1, 9);
  });

  it('rejects a bad configuration', () => {
    expect(() => new TokenBucket({ ratePerSec: 0, burst: 1 })).toThrow(/rate/);
    expect(() => new TokenBucket({ ratePerSec: 10, burst: 0 })).toThrow(/burst/);
  });
});
