import type { ClientAddress } from '@lockfabric/ports';

/**
 * TailPtr (40 bits): a 16-bit node id and a 24-bit endpoint ("DCT") number (spec §2.3).
 *
 * NodeId is the fabric node id + 1, because node 0 exists here and NodeId 0 means "no writer".
 * The endpoint number names one receive endpoint of one client, and one incarnation of it:
 *
 *   DctQpNum = client (12 bits) << 12 | slot (4 bits) << 8 | generation (8 bits, 1..255)
 *
 * A client has up to 16 endpoint slots (K, one per lock it may hold or wait for at once). Every new
 * enqueue on a slot takes the next generation, so messages meant for an earlier acquisition on the
 * same slot (a late Successor after a dropped lock, anything from before a reset; spec A24) carry a
 * TailPtr that no longer matches and are discarded. The generation is never 0, so no live TailPtr is 0.
 */
export interface Endpoint {
  readonly node: number;
  readonly client: number;
  readonly slot: number;
  readonly generation: number;
}

export const MAX_NODE = 0xfffe;
export const MAX_CLIENT = 0xfff;
export const MAX_SLOTS = 16;
export const MAX_GENERATION = 0xff;

export function encodeTail(endpoint: Endpoint): bigint {
  const { node, client, slot, generation } = endpoint;
  if (!Number.isInteger(node) || node < 0 || node > MAX_NODE) throw new RangeError(`ShiftLock node ids are 0..${MAX_NODE}, got ${node}`);
  if (!Number.isInteger(client) || client < 0 || client > MAX_CLIENT) {
    throw new RangeError(`ShiftLock client numbers are 0..${MAX_CLIENT} (12 bits of the endpoint number), got ${client}`);
  }
  if (!Number.isInteger(slot) || slot < 0 || slot >= MAX_SLOTS) throw new RangeError(`endpoint slot must be 0..${MAX_SLOTS - 1}, got ${slot}`);
  if (!Number.isInteger(generation) || generation < 1 || generation > MAX_GENERATION) {
    throw new RangeError(`endpoint generation must be 1..${MAX_GENERATION}, got ${generation}`);
  }
  const dct = (client << 12) | (slot << 8) | generation;
  return BigInt(node + 1) | (BigInt(dct) << 16n);
}

/** The endpoint a non-null TailPtr names. */
export function decodeTail(tail: bigint): Endpoint {
  const nodeField = Number(tail & 0xffffn);
  const dct = Number((tail >> 16n) & 0xff_ffffn);
  if (tail === 0n || nodeField === 0) throw new RangeError(`TailPtr ${tail} names no endpoint`);
  return { node: nodeField - 1, client: dct >>> 12, slot: (dct >>> 8) & 0xf, generation: dct & 0xff };
}

export function tailAddress(tail: bigint): ClientAddress {
  const { node, client } = decodeTail(tail);
  return { node, client };
}

/** Generation after `generation`, cycling through 1..255. */
export function nextGeneration(generation: number): number {
  return generation >= MAX_GENERATION ? 1 : generation + 1;
}
