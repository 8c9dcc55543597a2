/**
 * ShiftLock's 16-byte lock entry (spec §2.1, choice A5), held as one unsigned 128-bit value in the
 * fabric's little-endian order: bytes 0..7 are word 0, bytes 8..15 are `RelCnt`.
 *
 *   bit  0        Epoch     flipped when a writer hands the lock to readers
 *   bits 1..23    RdrCnt    readers counted at their FAA and not yet released (waiting or holding)
 *   bits 24..39   NodeId    } TailPtr: the writer at the queue tail, 0 = none
 *   bits 40..63   DctQpNum  }
 *   bits 64..127  RelCnt    releases so far (wrapping); a recovery adds 2^63
 */
export const ENTRY_BYTES = 16;

const ones = (bits: number): bigint => (1n << BigInt(bits)) - 1n;

export const U64_MASK = ones(64);
export const ENTRY_MASK = ones(128);
export const EPOCH_MASK = 1n;
export const READERS_SHIFT = 1n;
export const READERS_BITS = 23;
export const READERS_MAX = Number(ones(READERS_BITS));
export const READERS_MASK = ones(READERS_BITS) << READERS_SHIFT;
export const TAIL_SHIFT = 24n;
export const TAIL_BITS = 40;
export const TAIL_MASK = ones(TAIL_BITS) << TAIL_SHIFT;
export const RELCNT_SHIFT = 64n;
export const RELCNT_MASK = U64_MASK << RELCNT_SHIFT;
/** Distance a recovery moves `RelCnt` (spec §4.3): half the counter, never reached by real releases. */
export const LEAP = 1n << 63n;

/** ExtFAA boundary mask (A6): the most significant bit of every field, so no carry crosses a field. */
export const FIELD_BOUNDARIES = (1n << 0n) | (1n << 23n) | (1n << 39n) | (1n << 63n) | (1n << 127n);

/** Reader acquire: RdrCnt + 1. */
export const READER_ACQUIRE_ADD = 1n << READERS_SHIFT;
/** Reader release, one atomic over both words: RdrCnt − 1 (adding the field's all-ones) and RelCnt + 1. */
export const READER_RELEASE_ADD = READERS_MASK | (1n << RELCNT_SHIFT);
/** Writer-to-readers transfer: flip Epoch and count the writer's release. */
export const TRANSFER_ADD = EPOCH_MASK | (1n << RELCNT_SHIFT);

export type Epoch = 0 | 1;

export interface LockEntry {
  readonly epoch: Epoch;
  readonly readers: number;
  /** 40-bit TailPtr; 0n means no writer is queued. */
  readonly tail: bigint;
  readonly relCnt: bigint;
}

export function decodeEntry(value: bigint): LockEntry {
  return {
    epoch: (value & EPOCH_MASK) === 0n ? 0 : 1,
    readers: Number((value & READERS_MASK) >> READERS_SHIFT),
    tail: (value & TAIL_MASK) >> TAIL_SHIFT,
    relCnt: (value >> RELCNT_SHIFT) & U64_MASK,
  };
}

export function encodeEntry(entry: LockEntry): bigint {
  if (!Number.isInteger(entry.readers) || entry.readers < 0 || entry.readers > READERS_MAX) {
    throw new RangeError(`RdrCnt must be an integer in 0..${READERS_MAX}, got ${entry.readers}`);
  }
  return (
    BigInt(entry.epoch) |
    (BigInt(entry.readers) << READERS_SHIFT) |
    ((entry.tail << TAIL_SHIFT) & TAIL_MASK) |
    ((entry.relCnt & U64_MASK) << RELCNT_SHIFT)
  );
}

/** The whole entry from the 16 bytes a READ returns. */
export function entryFromBytes(bytes: Uint8Array): bigint {
  if (bytes.length < ENTRY_BYTES) throw new RangeError(`a lock entry is ${ENTRY_BYTES} bytes, got ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, ENTRY_BYTES);
  return view.getBigUint64(0, true) | (view.getBigUint64(8, true) << 64n);
}

export function u64FromBytes(bytes: Uint8Array): bigint {
  if (bytes.length < 8) throw new RangeError(`expected 8 bytes, got ${bytes.length}`);
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}

export function addU64(value: bigint, delta: bigint): bigint {
  return (value + delta) & U64_MASK;
}

/** True iff a recovery happened between observations `older` and `newer` of RelCnt (A15). */
export function leap(older: bigint, newer: bigint): boolean {
  return ((newer - older) & U64_MASK) >= LEAP;
}

/** Compare-mask 0 ExtCAS: an unconditional fetch-and-store of TailPtr. */
export function enqueueSwap(me: bigint): bigint {
  return (me << TAIL_SHIFT) & TAIL_MASK;
}

/**
 * Swap value of the empty-queue release: TailPtr → null, RelCnt → curRel + 1, Epoch → newEpoch.
 * RdrCnt is outside the swap mask because readers may be incrementing it concurrently.
 */
export function emptyQueueReleaseSwap(curRel: bigint, newEpoch: Epoch): bigint {
  return (addU64(curRel, 1n) << RELCNT_SHIFT) | BigInt(newEpoch);
}
export const EMPTY_QUEUE_RELEASE_SWAP_MASK = TAIL_MASK | EPOCH_MASK | RELCNT_MASK;

/** The value a server reset writes: word 0 cleared, RelCnt leapt by 2^63 (spec §4.3). */
export function resetValue(relCnt: bigint): bigint {
  return addU64(relCnt, LEAP) << RELCNT_SHIFT;
}
