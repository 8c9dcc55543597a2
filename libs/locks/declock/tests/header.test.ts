import { describe, expect, it } from 'vitest';
import { HeaderLayout, VER_INIT, add64, sub64 } from '../src/index.js';

const U64 = (1n << 64n) - 1n;

/** Applies FAAs as the NIC does: 64-bit wrap-around addition. */
function faa(word: bigint, ...deltas: bigint[]): bigint {
  return deltas.reduce(add64, word);
}

describe('header layout (spec §2.1, Fig. 5)', () => {
  it('C = 8: resetID bits 0–7, wcnt 8–11, qsize 12–15, qhead 16–63', () => {
    const h = new HeaderLayout(8);
    expect([h.wcntShift, h.qsizeShift, h.qheadShift, h.countBits]).toEqual([8, 12, 16, 4]);
    // qhead = position bits (3 slot + 16 version + 1 guard) and, above them, the reset epoch.
    expect(h.positionBits).toBe(20);
    expect(h.epochShift).toBe(36);
    expect(h.epochBits + h.positionBits).toBe(48);
  });

  it('C = 128: wcnt 8–15, qsize 16–23, qhead 24–63', () => {
    const h = new HeaderLayout(128);
    expect([h.wcntShift, h.qsizeShift, h.qheadShift, h.countBits]).toEqual([8, 16, 24, 8]);
    expect(h.epochBits + h.positionBits).toBe(40);
  });

  it('refuses capacities that are not powers of two in 2..2048', () => {
    for (const bad of [0, 1, 3, 12, 4096]) expect(() => new HeaderLayout(bad)).toThrow(/power of two/);
  });

  it('FAA deltas are the spec constants', () => {
    const h = new HeaderLayout(8);
    expect(h.acquireDelta('shared')).toBe(1n << 12n);
    expect(h.acquireDelta('exclusive')).toBe((1n << 12n) + (1n << 8n));
    expect(h.releaseDelta('shared')).toBe(((1n << 16n) - (1n << 12n)) & U64);
    expect(h.releaseDelta('exclusive')).toBe(((1n << 16n) - (1n << 12n) - (1n << 8n)) & U64);
    // The artifact's "qhead +1, qsize −1, wcnt −1" per field is the same integer.
    expect(h.releaseDelta('exclusive')).toBe(0x0000_0000_0000_ef00n);
  });
});

describe('header arithmetic (worked example)', () => {
  const h = new HeaderLayout(8);
  const SH = h.acquireDelta('shared');
  const EX = h.acquireDelta('exclusive');

  it('writer, two readers, writer: positions, grant tests and releases', () => {
    let word = 0n;
    // W1 finds the lock free (s = 0): granted at once, position 0.
    expect(h.decode(word)).toMatchObject({ qhead: 0, qsize: 0, wcnt: 0 });
    word = faa(word, EX);
    // R2 sees s = 1, w = 1: waits at position h + s = 1.
    const r2 = h.decode(word);
    expect([r2.qhead + r2.qsize, r2.wcnt]).toEqual([1, 1]);
    word = faa(word, SH);
    // R3 sees w = 1 too: waits at position 2.
    expect(h.decode(word).qhead + h.decode(word).qsize).toBe(2);
    word = faa(word, SH);
    // W4 waits at position 3.
    word = faa(word, EX);
    expect(h.decode(word)).toMatchObject({ qhead: 0, qsize: 4, wcnt: 2, resetId: 0 });
    // W1 releases: head moves to 1, the readers at 1 and 2 are notified (workflow ➄).
    const beforeW1 = h.decode(word);
    word = faa(word, h.releaseDelta('exclusive'));
    expect(beforeW1).toMatchObject({ qhead: 0, qsize: 4 });
    expect(h.decode(word)).toMatchObject({ qhead: 1, qsize: 3, wcnt: 1 });
    // A newcomer reader now sees w = 1 (W4 queued): it waits behind W4 — no overtaking.
    expect(h.decode(word).wcnt).toBe(1);
    // R2 and R3 release: reader releases dequeue "the head" whoever it is.
    word = faa(word, h.releaseDelta('shared'), h.releaseDelta('shared'));
    expect(h.decode(word)).toMatchObject({ qhead: 3, qsize: 1, wcnt: 1 });
    word = faa(word, h.releaseDelta('exclusive'));
    // Idle: qsize = wcnt = 0 and qhead = number of releases (invariant I2).
    expect(h.decode(word)).toMatchObject({ qhead: 4, qsize: 0, wcnt: 0, resetId: 0, epoch: 0 });
  });

  it('FAAs never touch the reset id, and return it to the issuer', () => {
    let word = h.withResetId(0n, 7);
    word = faa(word, EX, SH, h.releaseDelta('exclusive'));
    expect(h.decode(word)).toMatchObject({ resetId: 7, qhead: 1, qsize: 1, wcnt: 0 });
  });

  it('a release is exact whenever qsize ≥ 1 (no field borrows)', () => {
    for (let qsize = 1; qsize < 16; qsize++) {
      for (let wcnt = 1; wcnt <= qsize; wcnt++) {
        const word = h.encode({ epoch: 5, qhead: 1000, qsize, wcnt, resetId: 0 });
        expect(h.decode(add64(word, h.releaseDelta('exclusive')))).toEqual({ epoch: 5, qhead: 1001, qsize: qsize - 1, wcnt: wcnt - 1, resetId: 0 });
      }
    }
  });
});

describe('qsize overflow and qhead wrap', () => {
  const h = new HeaderLayout(8);
  const SH = h.acquireDelta('shared');

  it('the spare qsize bit absorbs up to 2C−1 queued clients without touching qhead', () => {
    let word = h.encode({ epoch: 0, qhead: 40, qsize: 0, wcnt: 0, resetId: 0 });
    for (let i = 0; i < 2 * 8 - 1; i++) word = faa(word, SH);
    expect(h.decode(word)).toMatchObject({ qhead: 40, qsize: 15 });
    // An acquirer seeing s ≥ C starts a reset (proactive check); s = 8 … 15 stays representable.
    expect(h.decode(word).qsize >= h.capacity).toBe(true);
  });

  it('past 2C−1 qsize carries into qhead: the state the sizing check refuses', () => {
    let word = h.encode({ epoch: 0, qhead: 40, qsize: 15, wcnt: 0, resetId: 0 });
    word = faa(word, SH);
    expect(h.decode(word)).toMatchObject({ qhead: 41, qsize: 0 });
  });

  it('slots wrap around the ring while the lap (version) counts up', () => {
    expect([7, 8, 9, 15, 16].map((p) => h.slot(p))).toEqual([7, 0, 1, 7, 0]);
    expect([7, 8, 9, 15, 16].map((p) => h.version(p))).toEqual([0, 1, 1, 1, 2]);
    // Lap 0xFFFF is the never-written marker: a position there needs a reset first.
    const last = 0xffff * 8;
    expect(h.version(last - 1)).toBe(0xfffe);
    expect(h.lap(last)).toBe(VER_INIT);
  });

  it('the head may step one lap past 0xFFFF without carrying (guard bit), and a reset starts the next epoch', () => {
    const nearWrap = h.encode({ epoch: 3, qhead: 0xffff * 8 - 1, qsize: 1, wcnt: 1, resetId: 0 });
    const released = add64(nearWrap, h.releaseDelta('exclusive'));
    expect(h.decode(released)).toEqual({ epoch: 3, qhead: 0xffff * 8, qsize: 0, wcnt: 0, resetId: 0 });
    expect(h.lap(h.decode(released).qhead)).toBe(VER_INIT); // the release-side check fires here
    const fresh = h.epochStart(h.nextEpoch(3));
    expect(h.decode(fresh)).toEqual({ epoch: 4, qhead: 0, qsize: 0, wcnt: 0, resetId: 0 });
    expect(h.version(h.decode(fresh).qhead)).toBe(0);
  });

  it('qhead is the top field: its overflow falls off the word and leaves every other field intact', () => {
    const top = h.encode({ epoch: 2 ** h.epochBits - 1, qhead: 2 ** h.positionBits - 1, qsize: 3, wcnt: 2, resetId: 9 });
    const wrapped = add64(top, 1n << BigInt(h.qheadShift));
    expect(h.decode(wrapped)).toEqual({ epoch: 0, qhead: 0, qsize: 3, wcnt: 2, resetId: 9 });
    expect(sub64(wrapped, 1n << BigInt(h.qheadShift))).toBe(top);
  });

  it('epochs wrap modulo 2^epochBits', () => {
    expect(h.nextEpoch(2 ** h.epochBits - 1)).toBe(0);
  });
});
