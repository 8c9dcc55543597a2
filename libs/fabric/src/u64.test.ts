import { describe, expect, it } from 'vitest';
import { deriveRkey } from './rkey.js';
import {
  U128_MAX,
  U64_MAX,
  fieldBoundary,
  fieldMask,
  getField,
  hex,
  isU128,
  isU64,
  readU128LE,
  readU64LE,
  setField,
  u128ToBytes,
  u64ToBytes,
} from './u64.js';

describe('u64 helpers', () => {
  it('round-trips 64- and 128-bit values through little-endian bytes', () => {
    expect([...u64ToBytes(0x0102n)]).toEqual([2, 1, 0, 0, 0, 0, 0, 0]);
    expect(readU64LE(u64ToBytes(U64_MAX))).toBe(U64_MAX);
    const v = (0xdeadn << 64n) | 0xbeefn;
    const bytes = u128ToBytes(v);
    expect(readU64LE(bytes, 0)).toBe(0xbeefn);
    expect(readU64LE(bytes, 8)).toBe(0xdeadn);
    expect(readU128LE(bytes)).toBe(v);
    expect(readU128LE(u128ToBytes(U128_MAX))).toBe(U128_MAX);
    // Offsets inside a larger view are honoured.
    const big = new Uint8Array(24);
    big.set(u64ToBytes(77n), 16);
    expect(readU64LE(big.subarray(8), 8)).toBe(77n);
  });

  it('rejects values and offsets out of range', () => {
    expect(() => u64ToBytes(-1n)).toThrow(RangeError);
    expect(() => u64ToBytes(1n << 64n)).toThrow(RangeError);
    expect(() => u128ToBytes(1n << 128n)).toThrow(RangeError);
    expect(() => readU64LE(new Uint8Array(8), 1)).toThrow(RangeError);
    expect([isU64(U64_MAX), isU64(U64_MAX + 1n), isU64(-1n), isU64(1)]).toEqual([true, false, false, false]);
    expect([isU128(U128_MAX), isU128(U128_MAX + 1n)]).toEqual([true, false]);
  });

  it('builds masks and reads and writes fields', () => {
    expect(fieldMask(0, 64)).toBe(U64_MAX);
    expect(fieldMask(24, 16)).toBe(0xffff_000000n);
    expect(fieldBoundary(1, 23)).toBe(1n << 23n);
    const word = setField(setField(0n, 1, 23, 5n), 24, 16, 0xabcdn);
    expect(getField(word, 1, 23)).toBe(5n);
    expect(getField(word, 24, 16)).toBe(0xabcdn);
    expect(getField(setField(word, 1, 23, 1n << 23n), 1, 23)).toBe(0n); // truncated to the field
    expect(getField(word, 24, 16)).toBe(0xabcdn);
    expect(() => fieldMask(-1, 3)).toThrow(RangeError);
    expect(() => fieldBoundary(0, 0)).toThrow(RangeError);
    expect(hex(255n)).toBe('0xff');
    expect(hex(-1n)).toBe('-0x1');
  });

  it('derives distinct 32-bit rkeys deterministically', () => {
    const keys = new Set<number>();
    for (let node = 0; node < 32; node++) for (let region = 0; region < 32; region++) keys.add(deriveRkey(node, region));
    expect(keys.size).toBe(1024);
    for (const key of keys) expect(key >>> 0).toBe(key);
    expect(deriveRkey(5, 2)).toBe(deriveRkey(5, 2));
  });
});
