import { describe, expect, it } from 'vitest';
import { createHotspotChooser, hotBlockStart, validateHotspot } from './hotspot.js';
import { lcg32 } from '@lockfabric/random';

/** Deterministic stand-in for a client's seeded Random. */
function lcg(seed: number) {
  const next = lcg32(seed, 'numericalRecipes');
  return { next, int: (bound: number) => Math.floor(next() * bound) };
}

describe('FissLock dynamic workload: the moving hotspot', () => {
  const hotspot = { hotLocks: 2_500, hotShare: 0.5, moveEveryMs: 300 };
  const locks = 1_000_000;

  it('sends the hot share into the hot block, the rest elsewhere, and moves the block every period', () => {
    let nowNs = 10 * 1e6;
    const chooser = createHotspotChooser(hotspot, locks, lcg(3), { nowNs: () => nowNs });
    const block = (t: number) => hotBlockStart(hotspot, locks, t);
    const first = block(nowNs);
    let hot = 0;
    for (let i = 0; i < 20_000; i++) {
      const lock = chooser.next();
      expect(lock).toBeGreaterThanOrEqual(0);
      expect(lock).toBeLessThan(locks);
      if (lock >= first && lock < first + hotspot.hotLocks) hot++;
    }
    // Half the draws, give or take what 2 500 cold-but-unlucky draws out of 997 500 locks add.
    expect(hot).toBeGreaterThan(9_600);
    expect(hot).toBeLessThan(10_400);
    // Every one of the next 400 periods puts the block somewhere else (400 slots, a stride prime to 400).
    const starts = new Set<number>();
    for (let p = 0; p < 400; p++) starts.add(block(p * 300 * 1e6));
    expect(starts.size).toBe(400);
    nowNs += 300 * 1e6;
    const second = block(nowNs);
    expect(second).not.toBe(first);
    let stale = 0;
    for (let i = 0; i < 10_000; i++) {
      const lock = chooser.next();
      if (lock >= first && lock < first + hotspot.hotLocks) stale++;
    }
    // Only cold draws may land in the old block now: about 10 000 × ½ × 2 500 / 997 500.
    expect(stale).toBeLessThan(60);
  });

  it('lists bad settings', () => {
    expect(validateHotspot({ hotLocks: 10, hotShare: 1.5, moveEveryMs: 0 }, 10)).toHaveLength(3);
  });

});
