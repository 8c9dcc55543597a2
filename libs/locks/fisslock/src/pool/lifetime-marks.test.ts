import { describe, expect, it } from 'vitest';
import { LifetimeMarks } from './lifetime-marks.js';

describe('LifetimeMarks: may an ACQUIRE copy at a seq of this machine find the lock free?', () => {
  it('with no held mark before it, yes (nothing says the lock is held here)', () => {
    const m = new LifetimeMarks();
    expect(m.mayFindFree(0, 5)).toBe(true);
    m.heldAt(0, 7); // a mark after the copy says nothing of the switch state when it is decided
    expect(m.mayFindFree(0, 5)).toBe(true);
  });

  it('a held mark before it with no ender between: no, the lifetime seen held lasts until an ender', () => {
    const m = new LifetimeMarks();
    m.ender(0, 2);
    m.heldAt(0, 3);
    expect(m.mayFindFree(0, 5)).toBe(false);
    expect(m.mayFindFree(1, 5)).toBe(true); // per lock
  });

  it('an ender after the last held mark (seed 8: aborts 186 and 187 ahead of copy 190): yes', () => {
    const m = new LifetimeMarks();
    m.heldAt(0, 180);
    m.ender(0, 186);
    m.ender(0, 187);
    expect(m.mayFindFree(0, 190)).toBe(true);
    // a packet routed back here as new after those enders: held again before the copy
    m.heldAt(0, 188);
    expect(m.mayFindFree(0, 190)).toBe(false);
    // an ender after the copy does not matter to it
    m.ender(0, 191);
    expect(m.mayFindFree(0, 190)).toBe(false);
    expect(m.mayFindFree(0, 192)).toBe(true);
  });

  it('keeps a bounded number of marks per lock; clear forgets them all', () => {
    const m = new LifetimeMarks();
    for (let s = 1; s <= 1_000; s++) m.heldAt(0, s);
    expect(m.mayFindFree(0, 1_001)).toBe(false);
    m.clear();
    expect(m.mayFindFree(0, 1_001)).toBe(true);
  });
});
