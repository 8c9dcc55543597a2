import type { Clock, LockId, Random } from '@lockfabric/ports';
import type { KeyChooser } from './key-chooser.js';

/**
 * FissLock §7.5's dynamic workload: a share of the requests goes to a block of hot locks that
 * moves to another place every period; the rest are spread evenly over the other locks. Every
 * client derives the hot block from its clock alone, so all clients (all processes, on live) agree
 * on where it is without talking.
 */
export interface HotspotSpec {
  /** Locks in the hot block (FissLock: 2 500). */
  readonly hotLocks: number;
  /** Fraction of requests that go to the hot block (FissLock: 0.5). */
  readonly hotShare: number;
  /** The block moves every this many ms (FissLock: 300). */
  readonly moveEveryMs: number;
}

export const HOTSPOT_DEFAULTS: HotspotSpec = { hotLocks: 2_500, hotShare: 0.5, moveEveryMs: 300 };
/** FissLock's dynamic workload runs over 1 M locks. */
export const HOTSPOT_DEFAULT_LOCKS = 1_000_000;

export function validateHotspot(hotspot: HotspotSpec, locks: number): string[] {
  const problems: string[] = [];
  if (!Number.isSafeInteger(hotspot.hotLocks) || hotspot.hotLocks < 1 || hotspot.hotLocks >= locks) problems.push(`hot locks must be a whole number in 1 … locks−1 (got ${String(hotspot.hotLocks)} of ${locks})`);
  if (!(hotspot.hotShare >= 0 && hotspot.hotShare <= 1)) problems.push(`hot share must be between 0 and 1 (got ${String(hotspot.hotShare)})`);
  if (!(hotspot.moveEveryMs > 0) || !Number.isFinite(hotspot.moveEveryMs)) problems.push(`the hotspot's period must be a number of ms > 0 (got ${String(hotspot.moveEveryMs)})`);
  return problems;
}

/** Slot steps between consecutive positions: odd and prime, so successive periods visit different slots. */
const SLOT_STRIDE = 977;

/** First lock of the hot block in the period that contains `timeNs`. */
export function hotBlockStart(hotspot: HotspotSpec, locks: number, timeNs: number): number {
  const slots = Math.max(1, Math.floor(locks / hotspot.hotLocks));
  const period = Math.floor(timeNs / (hotspot.moveEveryMs * 1e6));
  const slot = (((period * SLOT_STRIDE) % slots) + slots) % slots;
  return slot * hotspot.hotLocks;
}

export function createHotspotChooser(hotspot: HotspotSpec, locks: number, random: Random, clock: Pick<Clock, 'nowNs'>): KeyChooser {
  const cold = locks - hotspot.hotLocks;
  return {
    next: (): LockId => {
      const start = hotBlockStart(hotspot, locks, clock.nowNs());
      if (random.next() < hotspot.hotShare) return start + random.int(hotspot.hotLocks);
      const r = random.int(cold);
      return r < start ? r : r + hotspot.hotLocks;
    },
  };
}
