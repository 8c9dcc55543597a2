import type { AtomicWidth } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { maskedCasResult, maskedFaaResult, widthMask } from './atomic-ops.js';
import { xorshift32 } from '@lockfabric/random';

/** Slow, obviously-correct masked FAA: split into fields at the boundary bits, add each modulo its size. */
function referenceMaskedFaa(old: bigint, add: bigint, boundaryMask: bigint, width: AtomicWidth): bigint {
  let result = 0n;
  let start = 0;
  const bits = width * 8;
  for (let bit = 0; bit < bits; bit++) {
    if ((boundaryMask >> BigInt(bit)) & 1n || bit === bits - 1) {
      const size = BigInt(bit - start + 1);
      const mask = (1n << size) - 1n;
      const sum = (((old >> BigInt(start)) & mask) + ((add >> BigInt(start)) & mask)) & mask;
      result |= sum << BigInt(start);
      start = bit + 1;
    }
  }
  return result;
}

function randomBig(next: () => number, width: AtomicWidth): bigint {
  let v = 0n;
  for (let i = 0; i < width; i++) v = (v << 8n) | BigInt(next() & 0xff);
  return v;
}

describe('maskedFaaResult', () => {
  it('matches a field-by-field reference on random operands and masks', () => {
    const next = xorshift32(12345);
    for (let i = 0; i < 2000; i++) {
      const width: AtomicWidth = i % 2 === 0 ? 8 : 16;
      const old = randomBig(next, width);
      const add = randomBig(next, width);
      // Sparse masks give wide fields, dense ones narrow fields; both matter.
      const mask = randomBig(next, width) & randomBig(next, width) & randomBig(next, width);
      expect(maskedFaaResult(old, add, mask, width)).toBe(referenceMaskedFaa(old, add, mask, width));
    }
  });

  it('differs from a plain add when a carry crosses a boundary (the reference can tell them apart)', () => {
    const plain = (old: bigint, add: bigint, w: AtomicWidth) => (old + add) & widthMask(w);
    expect(plain(0xffn, 1n, 8)).not.toBe(referenceMaskedFaa(0xffn, 1n, 0x80n, 8));
    expect(maskedFaaResult(0xffn, 1n, 0x80n, 8)).toBe(0n);
    expect(maskedFaaResult(0xffn, 1n, 0n, 8)).toBe(0x100n);
  });
});

describe('maskedCasResult', () => {
  it('swaps masked bits only on a masked match', () => {
    expect(maskedCasResult(0b1010n, 0b1000n, 0b0101n, 0b1000n, 0b0011n)).toBe(0b1001n);
    expect(maskedCasResult(0b1010n, 0b0000n, 0b0101n, 0b1000n, 0b0011n)).toBeUndefined();
  });
});
