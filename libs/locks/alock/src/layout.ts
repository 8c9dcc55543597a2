import type { ClientAddress, DescriptorDirectory, RemoteAddr } from '@lockfabric/ports';

/**
 * ALock's memory layout (spec §2).
 *
 * Lock entry on the lock's home node H, three little-endian 8-byte words:
 *   +0  T_L     tail of the local cohort's MCS queue (RMW'd by local CPUs only, read by remote verbs)
 *   +8  T_R     tail of the remote cohort's MCS queue (RMW'd by remote verbs only, read by local CPUs)
 *   +16 victim  Peterson tie-breaker, the class id that yields (only ever read and written)
 * The entry is 32 bytes so an entry never straddles a 64-byte cache line.
 *
 * Descriptor slot (the fabric's, 512 bytes, on the owner's own node): sixteen queue descriptors and
 * a hand-over trace area, so a client can be queued on up to sixteen locks at once (a 2PL
 * transaction holds at most 16, the papers' bound; a timed-out acquire keeps its place too):
 *   +16·i      descriptor i: budget word (+0, see WAITING), next (+8)
 *   +256       trace area: trace id high (+0), trace id low (+8), span id (+16), tag (+24)
 */
export const ENTRY_BYTES = 32;
export const TAIL_OFFSET_BYTES: readonly [number, number] = [0, 8];
export const VICTIM_OFFSET_BYTES = 16;

/** Access classes: the class id is also the value written into `victim` (spec A6). */
export const LOCAL = 0;
export const REMOTE = 1;
export type AccessClass = typeof LOCAL | typeof REMOTE;

export function otherClass(cls: AccessClass): AccessClass {
  return cls === LOCAL ? REMOTE : LOCAL;
}

export function className(cls: AccessClass): 'local' | 'remote' {
  return cls === LOCAL ? 'local' : 'remote';
}

export const DESCRIPTOR_BYTES = 16;
export const DESCRIPTORS_PER_SLOT = 16;
const BUDGET_FIELD_BYTES = 0;
const NEXT_FIELD_BYTES = 8;
export const TRACE_AREA_OFFSET_BYTES = DESCRIPTORS_PER_SLOT * DESCRIPTOR_BYTES;
export const TRACE_AREA_BYTES = 32;
export const TRACE_TAG_OFFSET_BYTES = 24;
export const SLOT_BYTES_NEEDED = TRACE_AREA_OFFSET_BYTES + TRACE_AREA_BYTES;

/** Null tail / null `next`. No descriptor reference encodes to it (node ids are stored plus one). */
export const NULL_REF = 0n;

/**
 * Budget words hold budget + 1, so that 0 is the report's -1 ("waiting") and a zeroed slot is a
 * ready descriptor: budget waiting, next null. Every release leaves its descriptor in that state
 * again, which is why an acquire can swap its descriptor in as its very first step.
 */
export const WAITING = 0n;

export function budgetWord(budget: number): bigint {
  if (!Number.isSafeInteger(budget) || budget < 0) throw new RangeError(`alock budget ${budget} is not a non-negative integer`);
  return BigInt(budget) + 1n;
}

/** The budget a non-waiting word hands over. */
export function budgetOf(word: bigint): number {
  if (word === WAITING) throw new RangeError('alock budget word still reads "waiting"');
  return Number(word - 1n);
}

export function addrAt(base: RemoteAddr, deltaBytes: number): RemoteAddr {
  return { ...base, offset: base.offset + deltaBytes };
}

export function tailAddr(entry: RemoteAddr, cls: AccessClass): RemoteAddr {
  return addrAt(entry, TAIL_OFFSET_BYTES[cls]);
}

export function victimAddr(entry: RemoteAddr): RemoteAddr {
  return addrAt(entry, VICTIM_OFFSET_BYTES);
}

/** One queue descriptor: which client's slot, and which of its descriptors. */
export interface DescriptorId {
  readonly node: number;
  readonly client: number;
  readonly index: number;
}

const NODE_SHIFT = 43n;
const CLIENT_SHIFT = 11n;
const MAX_NODE = (1 << 20) - 1;
const MAX_CLIENT = 0xffff_ffff;

/**
 * A descriptor reference as stored in a tail or a `next` field (one global form for both
 * classes): (node + 1) · 2^43 | client · 2^11 | generation · 2^4 | index. Never zero, fits one
 * 64-bit word. The generation (7 bits, 0 until a release gave up on an unlinked successor) fences
 * late links: see `AlockClient.passOn`. `encodeRef` writes generation 0.
 */
export function encodeRef(id: DescriptorId): bigint {
  if (!Number.isInteger(id.node) || id.node < 0 || id.node > MAX_NODE) throw new RangeError(`alock descriptor node ${id.node} is out of range`);
  if (!Number.isInteger(id.client) || id.client < 0 || id.client > MAX_CLIENT) {
    throw new RangeError(`alock descriptor client ${id.client} is out of range`);
  }
  if (!Number.isInteger(id.index) || id.index < 0 || id.index >= DESCRIPTORS_PER_SLOT) {
    throw new RangeError(`alock descriptor index ${id.index} is out of range`);
  }
  return ((BigInt(id.node) + 1n) << NODE_SHIFT) | (BigInt(id.client) << CLIENT_SHIFT) | BigInt(id.index);
}

const INDEX_MASK = 0xfn;
const GENERATION_SHIFT = 4n;
const GENERATION_MASK = 0x7fn;
/** Generations wrap at this many: a link must be 128 release timeouts late to be mistaken. */
export const REF_GENERATIONS = 128;

/** The link generation a reference carries. */
export function refGeneration(ref: bigint): number {
  return Number((ref >> GENERATION_SHIFT) & GENERATION_MASK);
}

/** `ref` with its generation replaced by `generation` (modulo REF_GENERATIONS). */
export function withRefGeneration(ref: bigint, generation: number): bigint {
  return (ref & ~(GENERATION_MASK << GENERATION_SHIFT)) | ((BigInt(generation) & GENERATION_MASK) << GENERATION_SHIFT);
}

export function decodeRef(ref: bigint): DescriptorId {
  const nodePlusOne = ref >> NODE_SHIFT;
  const index = Number(ref & INDEX_MASK);
  if (ref <= NULL_REF || nodePlusOne < 1n || nodePlusOne > BigInt(MAX_NODE) + 1n || index >= DESCRIPTORS_PER_SLOT) {
    throw new RangeError(`0x${ref.toString(16)} is not an alock descriptor reference`);
  }
  return { node: Number(nodePlusOne - 1n), client: Number((ref >> CLIENT_SHIFT) & BigInt(MAX_CLIENT)), index };
}

/** Addresses of one descriptor's fields. */
export interface DescriptorAddrs {
  readonly budget: RemoteAddr;
  readonly next: RemoteAddr;
}

export function descriptorAddrs(directory: DescriptorDirectory, id: DescriptorId): DescriptorAddrs {
  const client: ClientAddress = { node: id.node, client: id.client };
  const base = addrAt(directory.of(client), id.index * DESCRIPTOR_BYTES);
  return { budget: addrAt(base, BUDGET_FIELD_BYTES), next: addrAt(base, NEXT_FIELD_BYTES) };
}

export function traceAreaAddr(directory: DescriptorDirectory, id: DescriptorId): RemoteAddr {
  return addrAt(directory.of({ node: id.node, client: id.client }), TRACE_AREA_OFFSET_BYTES);
}
