import { maskedCasResult, maskedFaaResult } from '@lockfabric/fabric';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_QUEUE_RELEASE_SWAP_MASK,
  ENTRY_MASK,
  FIELD_BOUNDARIES,
  LEAP,
  READERS_MASK,
  READERS_MAX,
  READER_ACQUIRE_ADD,
  READER_RELEASE_ADD,
  RELCNT_MASK,
  RELCNT_SHIFT,
  TAIL_MASK,
  TRANSFER_ADD,
  decodeEntry,
  emptyQueueReleaseSwap,
  encodeEntry,
  enqueueSwap,
  entryFromBytes,
  leap,
  resetValue,
} from '../src/index.js';

const U64 = (1n << 64n) - 1n;

describe('the 16-byte entry: field positions to the bit (spec §2.1, A5)', () => {
  it('Epoch bit 0, RdrCnt bits 1–23, NodeId 24–39, DctQpNum 40–63, RelCnt 64–127', () => {
    expect(encodeEntry({ epoch: 1, readers: 0, tail: 0n, relCnt: 0n })).toBe(1n);
    expect(encodeEntry({ epoch: 0, readers: 1, tail: 0n, relCnt: 0n })).toBe(2n);
    expect(encodeEntry({ epoch: 0, readers: READERS_MAX, tail: 0n, relCnt: 0n })).toBe(0xff_fffen);
    expect(encodeEntry({ epoch: 0, readers: 0, tail: 0xffffn, relCnt: 0n })).toBe(0xffffn << 24n);
    expect(encodeEntry({ epoch: 0, readers: 0, tail: 0xff_ffffn << 16n, relCnt: 0n })).toBe(0xff_ffffn << 40n);
    expect(encodeEntry({ epoch: 0, readers: 0, tail: 0n, relCnt: U64 })).toBe(U64 << 64n);
    expect(READERS_MAX).toBe(2 ** 23 - 1);
    expect(TAIL_MASK | READERS_MASK | 1n).toBe(U64);
    expect(RELCNT_MASK | U64).toBe(ENTRY_MASK);
  });

  it('decodes what it encodes, and the 16 bytes a READ returns (little-endian words)', () => {
    const entry = { epoch: 1 as const, readers: 12345, tail: 0xab_cdef_1234n, relCnt: 0x0123_4567_89ab_cdefn };
    const value = encodeEntry(entry);
    expect(decodeEntry(value)).toEqual(entry);
    const bytes = new Uint8Array(16);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(0, value & U64, true);
    view.setBigUint64(8, value >> 64n, true);
    expect(entryFromBytes(bytes)).toBe(value);
  });

  it('rejects an RdrCnt that does not fit', () => {
    expect(() => encodeEntry({ epoch: 0, readers: READERS_MAX + 1, tail: 0n, relCnt: 0n })).toThrow(RangeError);
  });
});

describe('operands, applied with the NIC model’s masked-atomic arithmetic (A6)', () => {
  const faa = (entry: Parameters<typeof encodeEntry>[0], add: bigint) => decodeEntry(maskedFaaResult(encodeEntry(entry), add, FIELD_BOUNDARIES, 16));

  it('reader acquire adds 1 to RdrCnt only', () => {
    expect(faa({ epoch: 1, readers: 4, tail: 77n, relCnt: 9n }, READER_ACQUIRE_ADD)).toEqual({ epoch: 1, readers: 5, tail: 77n, relCnt: 9n });
  });

  it('reader release is one atomic over both words: RdrCnt − 1 with no borrow into TailPtr, RelCnt + 1', () => {
    expect(faa({ epoch: 0, readers: 1, tail: 0xff_ffff_ffffn, relCnt: 41n }, READER_RELEASE_ADD)).toEqual({ epoch: 0, readers: 0, tail: 0xff_ffff_ffffn, relCnt: 42n });
    expect(faa({ epoch: 1, readers: READERS_MAX, tail: 0n, relCnt: U64 }, READER_RELEASE_ADD)).toEqual({ epoch: 1, readers: READERS_MAX - 1, tail: 0n, relCnt: 0n });
  });

  it('transfer flips Epoch both ways and counts one release, without carrying into RdrCnt', () => {
    expect(faa({ epoch: 0, readers: 3, tail: 5n, relCnt: 10n }, TRANSFER_ADD)).toEqual({ epoch: 1, readers: 3, tail: 5n, relCnt: 11n });
    expect(faa({ epoch: 1, readers: 3, tail: 5n, relCnt: 10n }, TRANSFER_ADD)).toEqual({ epoch: 0, readers: 3, tail: 5n, relCnt: 11n });
  });

  it('enqueue is a fetch-and-store of TailPtr (compare mask 0) that leaves the other fields', () => {
    const old = encodeEntry({ epoch: 1, readers: 2, tail: 0x11n, relCnt: 7n });
    const next = maskedCasResult(old, 0n, enqueueSwap(0x22n), 0n, TAIL_MASK);
    expect(decodeEntry(next!)).toEqual({ epoch: 1, readers: 2, tail: 0x22n, relCnt: 7n });
  });

  it('empty-queue release: succeeds only while TailPtr is mine; sets RelCnt and Epoch, keeps RdrCnt', () => {
    const me = 0x33n;
    const compare = enqueueSwap(me);
    const mine = encodeEntry({ epoch: 1, readers: 6, tail: me, relCnt: 99n });
    expect(decodeEntry(maskedCasResult(mine, compare, emptyQueueReleaseSwap(99n, 0), TAIL_MASK, EMPTY_QUEUE_RELEASE_SWAP_MASK)!)).toEqual({ epoch: 0, readers: 6, tail: 0n, relCnt: 100n });
    const successor = encodeEntry({ epoch: 1, readers: 6, tail: 0x44n, relCnt: 99n });
    expect(maskedCasResult(successor, compare, emptyQueueReleaseSwap(99n, 0), TAIL_MASK, EMPTY_QUEUE_RELEASE_SWAP_MASK)).toBeUndefined();
  });

  it('the server reset clears word 0 and leaps RelCnt by 2^63, compared on RelCnt only', () => {
    const stuck = encodeEntry({ epoch: 1, readers: 3, tail: 0x55n, relCnt: 5n });
    expect(decodeEntry(maskedCasResult(stuck, 5n << RELCNT_SHIFT, resetValue(5n), RELCNT_MASK, ENTRY_MASK)!)).toEqual({ epoch: 0, readers: 0, tail: 0n, relCnt: LEAP + 5n });
    expect(maskedCasResult(stuck, 4n << RELCNT_SHIFT, resetValue(4n), RELCNT_MASK, ENTRY_MASK)).toBeUndefined();
    expect(decodeEntry(resetValue(LEAP + 1n)).relCnt).toBe(1n);
  });
});

describe('leap test (A15)', () => {
  it('is (new − old) mod 2^64 ≥ 2^63', () => {
    expect(leap(0n, 1n)).toBe(false);
    expect(leap(5n, 5n)).toBe(false);
    expect(leap(U64, 3n)).toBe(false); // ordinary wrap-around
    expect(leap(7n, 7n + LEAP)).toBe(true);
    expect(leap(LEAP + 7n, 7n)).toBe(true); // a second reset also reads as a leap
    expect(leap(10n, 9n)).toBe(true); // any step backwards is one too
    expect(leap(0n, LEAP - 1n)).toBe(false);
  });
});
