import { U128_MAX, U64_MAX } from './u64.js';
import type { AtomicWidth } from '@lockfabric/ports';

/** All-ones of a masked atomic's width. */
export function widthMask(width: AtomicWidth): bigint {
  return width === 8 ? U64_MAX : U128_MAX;
}

/**
 * Extended CAS: only bits in `compareMask` are compared, only bits in `swapMask` are replaced.
 * Returns the new value, or `undefined` when the comparison fails (memory stays as it was).
 */
export function maskedCasResult(
  old: bigint,
  compare: bigint,
  swap: bigint,
  compareMask: bigint,
  swapMask: bigint,
): bigint | undefined {
  if ((old & compareMask) !== (compare & compareMask)) return undefined;
  return (old & ~swapMask) | (swap & swapMask);
}

/**
 * Extended FAA: fields end at the set bits of `boundaryMask` (each marks a field's most significant
 * bit) and the carry out of a field is dropped. The top bit of the width is always a boundary.
 *
 * Why it works: with every field's MSB cleared in both operands, a field's sum carries at most into
 * its own MSB position, never past it; XOR-ing the operands' MSBs back in then yields the MSB of the
 * field sum (carry-in ^ a ^ b) with the carry out discarded.
 */
export function maskedFaaResult(old: bigint, add: bigint, boundaryMask: bigint, width: AtomicWidth): bigint {
  const all = widthMask(width);
  const boundaries = (boundaryMask | (1n << BigInt(width * 8 - 1))) & all;
  const low = (old & ~boundaries) + (add & ~boundaries);
  return (low ^ ((old ^ add) & boundaries)) & all;
}
