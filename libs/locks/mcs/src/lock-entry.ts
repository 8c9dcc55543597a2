import type { ClientAddress } from '@lockfabric/ports';

/**
 * The MCS lock entry: 16 bytes, two little-endian 64-bit words.
 *
 * word 0, the queue tail (after the ShiftLock artifact's MCS baseline):
 *   bits  0..3   occupied: 1 while anyone holds or waits for the lock, 0 when it is free
 *   bits  4..15  link generation of the named queue node (the artifact's unused shared counter):
 *                0 until a release of that node gave up on an unlinked successor (see mcs.ts)
 *   bits 16..31  node id of the tail client
 *   bits 32..63  queue-node endpoint of the tail: client index · 2^ENDPOINT_INDEX_BITS + queue node
 * word 1: release counter, bumped on each handover when `releaseCounter` is on (the artifact does
 *   this "so the lock has FT ability"; nothing reads it here).
 *
 * The same 64-bit encoding names a queue node wherever a pointer is stored: in the tail word and in
 * a predecessor's `next` field. It is never zero, so zero means "none" in both places.
 */
export const ENTRY_BYTES = 16;
export const RELEASE_COUNTER_OFFSET = 8;
export const FREE = 0n;

const OCCUPIED = 1n;
const OCCUPIED_MASK = 0xfn;
const NODE_SHIFT = 16n;
const NODE_MASK = 0xffffn;
const ENDPOINT_SHIFT = 32n;
const ENDPOINT_MASK = 0xffff_ffffn;
/** Queue nodes per client are numbered in the endpoint's low bits: 16, one per lock of a 2PL transaction. */
export const ENDPOINT_INDEX_BITS = 4;
/** Every bit of the tail word: the enqueue swaps all of it. */
export const ALL_BITS = (1n << 64n) - 1n;

/** One client's queue node: the client and which node of its descriptor slot. */
export interface QueueNodeRef {
  readonly node: number;
  readonly client: number;
  readonly index: number;
}

export function encodePointer(ref: QueueNodeRef): bigint {
  if (!Number.isInteger(ref.node) || ref.node < 0 || ref.node > 0xffff) throw new RangeError(`mcs pointers hold node ids 0..65535, got ${ref.node}`);
  const maxClient = 2 ** (32 - ENDPOINT_INDEX_BITS);
  if (!Number.isInteger(ref.client) || ref.client < 0 || ref.client >= maxClient) throw new RangeError(`mcs pointers hold client indexes below ${maxClient}, got ${ref.client}`);
  if (!Number.isInteger(ref.index) || ref.index < 0 || ref.index >= 2 ** ENDPOINT_INDEX_BITS) throw new RangeError(`mcs queue node index ${ref.index} out of range`);
  const endpoint = (BigInt(ref.client) << BigInt(ENDPOINT_INDEX_BITS)) | BigInt(ref.index);
  return OCCUPIED | (BigInt(ref.node) << NODE_SHIFT) | (endpoint << ENDPOINT_SHIFT);
}

/** The queue node a non-zero pointer names; undefined for zero (free lock, no successor). */
export function decodePointer(word: bigint): QueueNodeRef | undefined {
  if ((word & OCCUPIED_MASK) === 0n) return undefined;
  const endpoint = (word >> ENDPOINT_SHIFT) & ENDPOINT_MASK;
  return {
    node: Number((word >> NODE_SHIFT) & NODE_MASK),
    client: Number(endpoint >> BigInt(ENDPOINT_INDEX_BITS)),
    index: Number(endpoint & ((1n << BigInt(ENDPOINT_INDEX_BITS)) - 1n)),
  };
}

const GENERATION_SHIFT = 4n;
const GENERATION_MASK = 0xfffn;
/** Generations wrap at this many: a link must be 4096 release timeouts late to be mistaken. */
export const GENERATION_COUNT = 4096;

/** The link generation carried in a pointer's bits 4..15. */
export function pointerGeneration(word: bigint): number {
  return Number((word >> GENERATION_SHIFT) & GENERATION_MASK);
}

/** `word` with its link generation replaced by `generation` (taken modulo GENERATION_COUNT). */
export function withGeneration(word: bigint, generation: number): bigint {
  const cleared = word & ~(GENERATION_MASK << GENERATION_SHIFT);
  return cleared | ((BigInt(generation) & GENERATION_MASK) << GENERATION_SHIFT);
}

export function isOccupied(word: bigint): boolean {
  return (word & OCCUPIED_MASK) !== 0n;
}

export function clientOf(ref: QueueNodeRef): ClientAddress {
  return { node: ref.node, client: ref.client };
}
