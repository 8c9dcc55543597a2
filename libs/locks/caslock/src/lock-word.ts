import type { ClientAddress } from '@lockfabric/ports';

/**
 * caslock words (8 bytes, little-endian); zero means free in both variants.
 *
 * exclusive: the whole word holds the holder's tag.
 * rw (the reader-writer CAS lock of DecLock's evaluation, after Chung & Zamanian):
 *   bits 32..63  writer tag, 0 when no writer
 *   bits  0..31  number of readers that announced themselves (holding or waiting)
 * Readers FAA +1 and hold once the writer field is clear, so the raised count keeps writers out:
 * the lock prefers readers.
 */
export const FREE = 0n;
export const ONE_READER = 1n;
export const MINUS_ONE = (1n << 64n) - 1n;
const LOW_32 = (1n << 32n) - 1n;

/** A client's holder tag: node·2^16 + client + 1 — never zero, fits 32 bits. */
export function holderTag(holder: ClientAddress): bigint {
  if (holder.node >= 0xffff || holder.client >= 0xffff) throw new RangeError(`caslock tags need node and client below 65535, got ${holder.node}/${holder.client}`);
  return (BigInt(holder.node) << 16n) | BigInt(holder.client + 1);
}

/** The compute node whose client a holder tag names. */
export function tagNode(tag: bigint): number {
  return Number(tag >> 16n);
}

export function writerWord(tag: bigint): bigint {
  return tag << 32n;
}

export function writerField(word: bigint): bigint {
  return word >> 32n;
}

export function readerField(word: bigint): bigint {
  return word & LOW_32;
}
