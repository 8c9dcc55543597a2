import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import type { Clock, Random } from '@lockfabric/ports';
import { DSLR_PLUS_POLICY, TruncatedExponentialPacing, readDslrBackoffOptions } from '../src/index.js';

class FakeClock implements Clock {
  timeNs = 0;
  nowNs(): number {
    return this.timeNs;
  }
  sleep(): Promise<void> {
    return Promise.resolve();
  }
}

const fixedRandom = (value: number): Random => ({ next: () => value, int: (bound) => Math.floor(value * bound) });

describe('DSLR+ poll backoff', () => {
  it('starts at 100 ns, doubles per poll and stops at the cap t_max (3.2 µs to begin with)', () => {
    const pacing = new TruncatedExponentialPacing(new FakeClock(), fixedRandom(0));
    const schedule = pacing.begin();
    const delays = Array.from({ length: 8 }, () => schedule.nextDelayNs(5));
    expect(delays).toEqual([100, 200, 400, 800, 1_600, 3_200, 3_200, 3_200]);
    // a new wait starts from the bottom again
    expect(pacing.begin().nextDelayNs(5)).toBe(100);
  });

  it('adds a uniform jitter below 2 µs to every wait', () => {
    const high = new TruncatedExponentialPacing(new FakeClock(), fixedRandom(0.999_999)).begin();
    expect(high.nextDelayNs(1)).toBe(100 + 1_999);
  });

  it('halves t_max after a window of mostly successful accesses and doubles it after a window of mostly failed ones, within [100 ns, 3.2 µs]', () => {
    const clock = new FakeClock();
    const pacing = new TruncatedExponentialPacing(clock, fixedRandom(0));
    const window = (failed: number, succeeded: number) => {
      for (let i = 0; i < failed; i++) pacing.attempt(false);
      for (let i = 0; i < succeeded; i++) pacing.attempt(true);
      clock.timeNs += DSLR_PLUS_POLICY.retuneNs;
      pacing.attempt(true); // the first access of the next window re-tunes
    };
    const caps: number[] = [];
    for (let i = 0; i < 7; i++) {
      window(1, 9);
      caps.push(pacing.currentCapNs);
    }
    expect(caps).toEqual([1_600, 800, 400, 200, 100, 100, 100]);
    window(6, 4); // ratio 0.6 (with the re-tuning access counted next window): between the watermarks, no change
    expect(pacing.currentCapNs).toBe(100);
    const upCaps: number[] = [];
    for (let i = 0; i < 7; i++) {
      window(9, 0);
      upCaps.push(pacing.currentCapNs);
    }
    expect(upCaps).toEqual([200, 400, 800, 1_600, 3_200, 3_200, 3_200]);
    const schedule = pacing.begin();
    expect([1, 2, 3, 4, 5, 6].map(() => schedule.nextDelayNs(1))).toEqual([100, 200, 400, 800, 1_600, 3_200]);
  });
});

describe('dslr-backoff options', () => {
  it('takes DSLR’s options and its own, but not DSLR’s polling switch', () => {
    const parsed = readDslrBackoffOptions({ leaseNs: 1_000_000, pollJitterNs: 500 });
    expect(parsed.dslr.leaseNs).toBe(1_000_000);
    expect(parsed.pollBackoff).toEqual({ ...DSLR_PLUS_POLICY, jitterNs: 500 });
    expect(() => readDslrBackoffOptions({ polling: 'busy' })).toThrow(ConfigError);
    expect(() => readDslrBackoffOptions({ pollBackoffCapMinNs: 5_000 })).toThrow(/CapMinNs/);
  });
});
