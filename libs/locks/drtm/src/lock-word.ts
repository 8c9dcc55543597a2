/**
 * The DrTM lock word: 8 bytes, little-endian, fields LSB-first as in the ShiftLock artifact's DrTM:
 *
 *   bit   0      W: write-locked
 *   bits  1..8   owner: the writer's machine (node id mod 256); recovery frees a dead machine's
 *   bits  9..63  read-lease end: 55 bits, in ticks of LEASE_TICK_NS on the shared clock
 *
 * 0 is free. A write-locked word carries no lease: there, bits 9..24 hold the writer's client
 * index + 1, so a writer whose CAS answer was lost can tell its own lock from a peer's on the same
 * machine (the artifact keeps only the machine). A read-leased word has W = 0 and a non-zero end.
 * The lease field counts 32 ns ticks rather than ns: 2^55 ns is only 417 days, which the live
 * substrate's clock (ns since 2025-01-01) passes early in 2026; 2^55 ticks last 36 years.
 */
export const FREE = 0n;
export const LEASE_TICK_NS = 32;

const WRITE_BIT = 1n;
const OWNER_SHIFT = 1n;
const OWNER_MASK = 0xffn;
const LEASE_SHIFT = 9n;
const LEASE_MAX_TICKS = (1n << 55n) - 1n;

const WRITER_MASK = 0xffffn;

/** The write-locked word of `owner` (a machine); with `client`, of that client of the machine. */
export function writeLockedWord(owner: number, client?: number): bigint {
  const writer = client === undefined ? 0n : (BigInt(client) + 1n) & WRITER_MASK;
  return WRITE_BIT | ((BigInt(owner) & OWNER_MASK) << OWNER_SHIFT) | (writer << LEASE_SHIFT);
}

export function isWriteLocked(word: bigint): boolean {
  return (word & WRITE_BIT) !== 0n;
}

export function ownerOf(word: bigint): number {
  return Number((word >> OWNER_SHIFT) & OWNER_MASK);
}

/** The read-lease word ending at or just before `endNs` (rounded down to a tick: never longer). */
export function leaseWord(endNs: number): bigint {
  if (!Number.isFinite(endNs) || endNs < LEASE_TICK_NS) throw new RangeError(`drtm lease end ${endNs} ns is not a positive time on the clock`);
  const ticks = BigInt(Math.floor(endNs / LEASE_TICK_NS));
  if (ticks > LEASE_MAX_TICKS) throw new RangeError(`drtm lease end ${endNs} ns does not fit the 55-bit lease field`);
  return ticks << LEASE_SHIFT;
}

/** End of the read lease a word carries, in ns on the shared clock; 0 for a free or write-locked word. */
export function leaseEndNs(word: bigint): number {
  if (isWriteLocked(word)) return 0;
  return Number(word >> LEASE_SHIFT) * LEASE_TICK_NS;
}
