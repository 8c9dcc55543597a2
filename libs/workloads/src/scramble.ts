import { fmix32 } from '@lockfabric/random';

/**
 * A keyed permutation of [0, n): hot Zipf ranks land on unrelated ids, and — unlike hashing the
 * rank modulo n, as YCSB does — no two ranks collide, so the distribution over ids is exactly
 * the rank distribution relabelled.
 *
 * A 4-round Feistel network over the smallest even number of bits covering n permutes
 * [0, 2^bits); cycle walking (re-encrypting until the value falls below n) restricts it to
 * [0, n). The domain is less than 4n, so a walk takes fewer than 4 steps on average.
 */
export class KeyedPermutation {
  private readonly halfSize: number;
  private readonly halfMask: number;
  private readonly keys: Uint32Array;

  constructor(
    readonly size: number,
    seed: number,
  ) {
    if (!Number.isSafeInteger(size) || size < 1 || size > 2 ** 32) throw new RangeError(`permutation size must be an integer in 1..2^32, got ${size}`);
    let bits = Math.max(2, Math.ceil(Math.log2(size)));
    if (bits % 2 === 1) bits++;
    this.halfSize = 2 ** (bits / 2);
    this.halfMask = this.halfSize - 1;
    this.keys = new Uint32Array(4);
    let state = seed >>> 0;
    for (let i = 0; i < 4; i++) {
      state = (state + 0x9e3779b9) >>> 0;
      this.keys[i] = mix32(state ^ Math.floor(seed / 2 ** 32));
    }
  }

  /** The image of `value` (0 ≤ value < size). */
  apply(value: number): number {
    let x = this.encrypt(value);
    while (x >= this.size) x = this.encrypt(x);
    return x;
  }

  private encrypt(value: number): number {
    let left = Math.floor(value / this.halfSize);
    let right = value % this.halfSize;
    for (let round = 0; round < 4; round++) {
      const next = (left ^ mix32(right ^ (this.keys[round] as number))) & this.halfMask;
      left = right;
      right = next >>> 0;
    }
    return left * this.halfSize + right;
  }
}

/** A 32-bit avalanche mix (the MurmurHash3 finaliser). */
export const mix32 = fmix32;

/** Size of the sparse lock-id space: ids travel as uint32 in packets and histories. */
export const SPARSE_LOCK_ID_SPACE = 2 ** 32;
/** A fixed key, so every run, process and tool agrees on the sparse ids. */
const SPARSE_KEY = 0x51a7_e1d5;
let sparsePermutation: KeyedPermutation | undefined;

/**
 * The sparse lock id of lock index `index` (0 ≤ index < 2^32): a fixed bijection of [0, 2^32)
 * (a keyed Feistel permutation), so distinct indexes never share an id and neighbouring indexes
 * land far apart.
 */
export function sparseLockId(index: number): number {
  sparsePermutation ??= new KeyedPermutation(SPARSE_LOCK_ID_SPACE, SPARSE_KEY);
  if (!Number.isInteger(index) || index < 0 || index >= SPARSE_LOCK_ID_SPACE) throw new RangeError(`lock index must be an integer in [0, 2^32), got ${index}`);
  return sparsePermutation.apply(index);
}
