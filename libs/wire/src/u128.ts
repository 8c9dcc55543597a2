/** Largest unsigned 64-bit value, and the mask that keeps the low 64 bits. */
export const U64_MASK = 0xffff_ffff_ffff_ffffn;
/** Largest unsigned 128-bit value. */
export const U128_MAX = (1n << 128n) - 1n;

/** True when `value` fits the wire's unsigned 128-bit lo/hi pairs. */
export function isU128(value: bigint): boolean {
  return value >= 0n && value <= U128_MAX;
}

/**
 * Splits an unsigned 128-bit value into the two little-endian 64-bit halves the wire carries.
 * Throws RangeError outside [0, 2^128): a negative or oversized value would otherwise be silently
 * truncated into a different, valid-looking one.
 */
export function splitU128(value: bigint, what: string): { lo: bigint; hi: bigint } {
  if (!isU128(value)) throw new RangeError(`${what} must be an unsigned 128-bit value, got ${value}`);
  return { lo: value & U64_MASK, hi: value >> 64n };
}

export function joinU128(lo: bigint, hi: bigint): bigint {
  return hi === 0n ? lo : (hi << 64n) | lo;
}
