/** Bit helpers for lock words: unsigned 64- and 128-bit values held in bigints, little-endian on the wire. */

export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

export function isU64(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= 0n && value <= U64_MAX;
}

export function isU128(value: unknown): value is bigint {
  return typeof value === 'bigint' && value >= 0n && value <= U128_MAX;
}

/** All-ones in `bits` bits starting at bit `shift` (LSB = bit 0). */
export function fieldMask(shift: number, bits: number): bigint {
  if (!Number.isInteger(shift) || !Number.isInteger(bits) || shift < 0 || bits < 0) {
    throw new RangeError(`fieldMask needs non-negative integer shift and bits, got shift=${shift} bits=${bits}`);
  }
  return ((1n << BigInt(bits)) - 1n) << BigInt(shift);
}

/** The boundary bit of a field for masked FAA: its most significant bit. */
export function fieldBoundary(shift: number, bits: number): bigint {
  if (!Number.isInteger(bits) || bits < 1) throw new RangeError(`a field needs at least one bit, got ${bits}`);
  return 1n << BigInt(shift + bits - 1);
}

/** Extracts the unsigned field `bits` wide at `shift` from `word`. */
export function getField(word: bigint, shift: number, bits: number): bigint {
  return (word & fieldMask(shift, bits)) >> BigInt(shift);
}

/** Returns `word` with the field at `shift` replaced by `value` (truncated to the field width). */
export function setField(word: bigint, shift: number, bits: number, value: bigint): bigint {
  const mask = fieldMask(shift, bits);
  return (word & ~mask) | ((value << BigInt(shift)) & mask);
}

/** Reads an unsigned little-endian 64-bit word at `offset` of `bytes`. */
export function readU64LE(bytes: Uint8Array, offset = 0): bigint {
  if (!Number.isInteger(offset) || offset < 0 || offset + 8 > bytes.length) {
    throw new RangeError(`cannot read 8 bytes at offset ${offset} of a ${bytes.length}-byte buffer`);
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigUint64(offset, true);
}

/** Reads an unsigned little-endian 128-bit value (low word first) at `offset` of `bytes`. */
export function readU128LE(bytes: Uint8Array, offset = 0): bigint {
  return readU64LE(bytes, offset) | (readU64LE(bytes, offset + 8) << 64n);
}

export function u64ToBytes(value: bigint): Uint8Array {
  if (!isU64(value)) throw new RangeError(`not an unsigned 64-bit value: ${String(value)}`);
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, value, true);
  return bytes;
}

export function u128ToBytes(value: bigint): Uint8Array {
  if (!isU128(value)) throw new RangeError(`not an unsigned 128-bit value: ${String(value)}`);
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, value & U64_MAX, true);
  view.setBigUint64(8, value >> 64n, true);
  return bytes;
}

/** Hex rendering for error details: users compare lock words in hex. */
export function hex(value: bigint): string {
  return value < 0n ? `-0x${(-value).toString(16)}` : `0x${value.toString(16)}`;
}
