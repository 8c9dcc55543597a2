import type { NodeId } from '@lockfabric/ports';

/**
 * A deterministic rkey for region `region` of `node`: a 32-bit mix of both ids, so runs replay
 * bit-identically while rkeys still look arbitrary (a client that guesses `rkey = region` fails).
 * Never 0, which some tools treat as "no key".
 */
export function deriveRkey(node: NodeId, region: number): number {
  // murmur3's 32-bit finaliser over a combination of the ids; constants are the published ones.
  let h = Math.imul(node ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(region + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  const rkey = h >>> 0;
  return rkey === 0 ? 0x5bd1e995 : rkey;
}
