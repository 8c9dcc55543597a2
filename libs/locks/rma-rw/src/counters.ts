/**
 * RMA-RW's entry, 24 bytes on the memory node (after the ShiftLock artifact's 128-bit RMA-RW word,
 * with the writer-phase length given its own word):
 *
 *   +0   MCS tail word (libs/locks/mcs), the writers' queue
 *   +8   phase word: how many writers have held the lock since the writer flag was last raised
 *        (the MCS entry's release-counter slot, which rma-rw leaves off)
 *   +16  counters word:
 *          bits  0..30  arrive: reader arrivals of this reader batch (granted, plus ones about to undo)
 *          bit   31     FLAG: a writer phase is open, readers keep out
 *          bits 32..63  depart: granted readers of this batch that released
 */
export const ENTRY_BYTES = 24;
export const PHASE_OFFSET = 8;
export const COUNTERS_OFFSET = 16;

export const FLAG = 1n << 31n;
export const ONE_DEPART = 1n << 32n;
export const MINUS_ONE = (1n << 64n) - 1n;
const ARRIVE_MASK = FLAG - 1n;
const U64 = (1n << 64n) - 1n;

export interface Counters {
  readonly arrive: bigint;
  readonly flag: boolean;
  readonly depart: bigint;
}

export function decodeCounters(word: bigint): Counters {
  return { arrive: word & ARRIVE_MASK, flag: (word & FLAG) !== 0n, depart: word >> 32n };
}

/** Readers holding the lock right now or about to undo an arrival: arrive − depart. */
export function readersInside(word: bigint): bigint {
  const c = decodeCounters(word);
  return c.arrive - c.depart;
}

/**
 * The counters with a finished batch taken out: `depart` granted-and-departed readers are
 * subtracted from both fields and FLAG cleared; arrivals still to be undone stay in `arrive`.
 */
export function afterReset(word: bigint): bigint {
  const c = decodeCounters(word);
  return (c.arrive - c.depart) & U64;
}
