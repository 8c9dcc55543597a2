import type { Random } from '@lockfabric/ports';

/**
 * The transaction streams' own generator (splitmix32 steps): independent of the client's
 * `ports.random`, which the protocol and the retry backoff consume in timing-dependent amounts. A
 * client's n-th transaction therefore depends only on the run seed and the client key, so the
 * driver can replay any client's stream to rebuild the transaction log from a history.
 */
export class StreamRandom implements Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  nextU32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }

  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  int(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}

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
