import type { Random } from '@lockfabric/ports';
import { SplitMix32 } from '@lockfabric/random';

/**
 * The transaction streams' own generator (splitmix32 steps): independent of the client's
 * `ports.random`, which the protocol and the retry backoff consume in timing-dependent amounts. A
 * client's n-th transaction therefore depends only on the run seed and the client key, so the
 * driver can replay any client's stream to rebuild the transaction log from a history.
 */
export class StreamRandom extends SplitMix32 {}

/** Uniform integer in [lo, hi]. */
export function uniformInt(random: Random, lo: number, hi: number): number {
  return lo + Math.floor(random.next() * (hi - lo + 1));
}

/** FNV-1a of a string mixed with a seed: the stream seed of one client. */
export function streamSeed(seed: number, clientKey: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < clientKey.length; i++) {
    h ^= clientKey.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= Math.floor(seed / 0x1_0000_0000) >>> 0;
  return Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
}
