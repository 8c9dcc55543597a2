import { describe, expect, it } from 'vitest';
import { FREE, LEASE_TICK_NS, isWriteLocked, leaseEndNs, leaseWord, ownerOf, writeLockedWord } from '../src/index.js';

describe('drtm lock word', () => {
  it('puts W in bit 0, the owner in bits 1..8 and nothing in the lease field of a write lock', () => {
    const word = writeLockedWord(5);
    expect(word).toBe(0b1011n);
    expect(isWriteLocked(word)).toBe(true);
    expect(ownerOf(word)).toBe(5);
    expect(leaseEndNs(word)).toBe(0);
    expect(ownerOf(writeLockedWord(0x1ff))).toBe(0xff);
  });

  it('names the writing client in bits 9..24 of a write lock, which is then no lease', () => {
    const word = writeLockedWord(5, 2);
    expect(word).toBe(0b1011n | (3n << 9n));
    expect([isWriteLocked(word), ownerOf(word), leaseEndNs(word)]).toEqual([true, 5, 0]);
    expect(writeLockedWord(5, 3)).not.toBe(word);
  });

  it('keeps a read lease end in bits 9..63, rounded down to a 32 ns tick', () => {
    const word = leaseWord(1_000_031);
    expect(isWriteLocked(word)).toBe(false);
    expect(word).toBe(BigInt(Math.floor(1_000_031 / LEASE_TICK_NS)) << 9n);
    expect(leaseEndNs(word)).toBe(1_000_000);
    expect(leaseWord(LEASE_TICK_NS)).not.toBe(FREE);
  });

  it('holds lease ends decades past the live clock origin, and refuses what does not fit', () => {
    const thirtyYearsNs = 30 * 365 * 24 * 3600 * 1e9;
    expect(leaseEndNs(leaseWord(thirtyYearsNs))).toBeCloseTo(thirtyYearsNs, -3);
    expect(() => leaseWord(2 ** 61)).toThrow(RangeError);
    expect(() => leaseWord(0)).toThrow(RangeError);
  });
});
