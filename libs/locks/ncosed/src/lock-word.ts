import type { ClientAddress } from '@lockfabric/ports';

/**
 * The N-CoSED lock word (DSLR §6.1's description of Narravula et al.): 8 bytes on the memory node.
 *   bits 32..63  tail: tag of the last exclusive requester (0: none)
 *   bits  0..31  count: granted shared holders
 * A tag is node·2^16 + client + 1 (never 0).
 */
const LOW_32 = (1n << 32n) - 1n;
export const MINUS_ONE = (1n << 64n) - 1n;

export function tagOf(client: ClientAddress): bigint {
  if (client.node >= 0xffff || client.client >= 0xffff) throw new RangeError(`ncosed tags need node and client below 65535, got ${client.node}/${client.client}`);
  return (BigInt(client.node) << 16n) | BigInt(client.client + 1);
}

export function clientOfTag(tag: bigint): ClientAddress {
  return { node: Number(tag >> 16n), client: Number(tag & 0xffffn) - 1 };
}

export function tailOf(word: bigint): bigint {
  return word >> 32n;
}

export function countOf(word: bigint): bigint {
  return word & LOW_32;
}

export function pack(tail: bigint, count: bigint): bigint {
  return (tail << 32n) | (count & LOW_32);
}

/** Message `value`s of the N-CoSED exchange (kind `custom`, `epoch` = the request id). */
export const REQUEST_EXCLUSIVE = 1n;
export const REQUEST_SHARED = 2n;
export const RETRY = 3n;
