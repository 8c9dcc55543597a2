import { ConfigError } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';

/** Width of the reset-CN field (K): CN ids 1..255, 0 = not resetting. */
export const RESET_ID_BITS = 8;
/** Lap counter used as the entry version (M); all ones means "never written". */
export const VERSION_BITS = 16;
export const VER_INIT = 0xffff;
/**
 * Bits of qhead that carry a position inside one reset epoch: slot bits, 16 version bits and one
 * guard bit, so the head may step one lap past 0xFFFF (the release-side wrap check) without
 * carrying. Every qhead bit above them counts completed resets (the lock's reset epoch).
 */
export const QHEAD_GUARD_BITS = 1;
export const MIN_CAPACITY = 2;
export const MAX_CAPACITY = 2048;
/** Below this many epoch bits a stale grant could match a later epoch too soon. */
const MIN_EPOCH_BITS = 4;
const U64 = (1n << 64n) - 1n;

export interface HeaderFields {
  /** Resets completed on this lock, modulo 2^epochBits (the high part of qhead). */
  readonly epoch: number;
  /** Logical head position inside the epoch (the low c+17 bits of qhead). */
  readonly qhead: number;
  readonly qsize: number;
  readonly wcnt: number;
  readonly resetId: number;
}

/** 64-bit two's-complement addition, as the NIC's FAA does it. */
export function add64(a: bigint, b: bigint): bigint {
  return (a + b) & U64;
}

export function sub64(a: bigint, b: bigint): bigint {
  return (a - b) & U64;
}

/**
 * The CQL lock header for capacity C = 2^c, most significant field first (paper Fig. 5):
 *
 *   qhead (all remaining bits) | qsize (N = c+1) | wcnt (N) | resetID (K = 8)
 *
 * `qhead` is one growing logical position: slot = pos mod C, version = (pos >> c) & 0xFFFF.
 * Its bits above c+17 are never reached inside one epoch (a version wrap forces a reset first),
 * so a reset starts the next epoch at the next multiple of 2^(c+17) instead of at 0: versions
 * restart at 0 exactly as after a zeroing reset, and every FAA result tells its issuer which
 * epoch it landed in, which is what fences grants sent before a reset.
 */
export class HeaderLayout {
  readonly capacity: number;
  readonly capacityLog2: number;
  /** N: bits of qsize and of wcnt. */
  readonly countBits: number;
  readonly wcntShift: number;
  readonly qsizeShift: number;
  readonly qheadShift: number;
  /** Bits of qhead used inside one epoch. */
  readonly positionBits: number;
  readonly epochShift: number;
  readonly epochBits: number;
  private readonly countMask: bigint;
  private readonly positionMask: bigint;
  private readonly resetMask: bigint;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || (capacity & (capacity - 1)) !== 0) {
      throw new ConfigError([`declock capacity must be a power of two in ${MIN_CAPACITY}..${MAX_CAPACITY}, got ${capacity}`]);
    }
    this.capacity = capacity;
    this.capacityLog2 = Math.log2(capacity);
    this.countBits = this.capacityLog2 + 1;
    this.wcntShift = RESET_ID_BITS;
    this.qsizeShift = RESET_ID_BITS + this.countBits;
    this.qheadShift = RESET_ID_BITS + 2 * this.countBits;
    this.positionBits = this.capacityLog2 + VERSION_BITS + QHEAD_GUARD_BITS;
    this.epochShift = this.qheadShift + this.positionBits;
    this.epochBits = 64 - this.epochShift;
    if (this.epochBits < MIN_EPOCH_BITS) throw new ConfigError([`declock capacity ${capacity} leaves too few header bits for the reset epoch`]);
    this.countMask = (1n << BigInt(this.countBits)) - 1n;
    this.positionMask = (1n << BigInt(this.positionBits)) - 1n;
    this.resetMask = (1n << BigInt(RESET_ID_BITS)) - 1n;
  }

  decode(word: bigint): HeaderFields {
    return {
      epoch: Number(word >> BigInt(this.epochShift)),
      qhead: Number((word >> BigInt(this.qheadShift)) & this.positionMask),
      qsize: Number((word >> BigInt(this.qsizeShift)) & this.countMask),
      wcnt: Number((word >> BigInt(this.wcntShift)) & this.countMask),
      resetId: Number(word & this.resetMask),
    };
  }

  /** Packs fields; each is truncated to its width (used by tests and by reset). */
  encode(fields: HeaderFields): bigint {
    const epochMask = (1n << BigInt(this.epochBits)) - 1n;
    return (
      ((BigInt(fields.epoch) & epochMask) << BigInt(this.epochShift)) |
      ((BigInt(fields.qhead) & this.positionMask) << BigInt(this.qheadShift)) |
      ((BigInt(fields.qsize) & this.countMask) << BigInt(this.qsizeShift)) |
      ((BigInt(fields.wcnt) & this.countMask) << BigInt(this.wcntShift)) |
      (BigInt(fields.resetId) & this.resetMask)
    );
  }

  /** ACQ(mode): qsize + 1, and wcnt + 1 for a writer. */
  acquireDelta(mode: LockMode): bigint {
    return (1n << BigInt(this.qsizeShift)) + (mode === 'exclusive' ? 1n << BigInt(this.wcntShift) : 0n);
  }

  /** REL(mode): qhead + 1, qsize − 1, and wcnt − 1 for a writer, as one 64-bit constant. */
  releaseDelta(mode: LockMode): bigint {
    return sub64(1n << BigInt(this.qheadShift), this.acquireDelta(mode));
  }

  /** Header value a reset leaves behind: empty queue, no reset in progress, the next epoch. */
  epochStart(epoch: number): bigint {
    return this.encode({ epoch, qhead: 0, qsize: 0, wcnt: 0, resetId: 0 });
  }

  nextEpoch(epoch: number): number {
    return (epoch + 1) % 2 ** this.epochBits;
  }

  withResetId(word: bigint, resetId: number): bigint {
    return (word & ~this.resetMask) | (BigInt(resetId) & this.resetMask);
  }

  slot(pos: number): number {
    return pos & (this.capacity - 1);
  }

  /** Entry version of a logical position: its ring lap, 16 bits. */
  version(pos: number): number {
    return Math.floor(pos / this.capacity) & VER_INIT;
  }

  /** Lap of a position without the 16-bit truncation (a lap ≥ 0xFFFF needs a reset). */
  lap(pos: number): number {
    return Math.floor(pos / this.capacity);
  }
}
