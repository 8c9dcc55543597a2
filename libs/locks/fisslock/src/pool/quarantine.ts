import type { LockId } from '@lockfabric/ports';

/**
 * Locks under a per-lock repair on this machine (spec §12.9; recovery/lock-repair.ts), with the
 * last time a packet of each arrived: the repair's drain waits until none has come for a while.
 * While a lock is here the pool answers its sends locally and absorbs its arriving packets.
 */
export class LockQuarantine {
  private readonly lastArrival = new Map<LockId, number>();

  /** Whether any lock is quarantined (the receive path's fast test). */
  get active(): boolean {
    return this.lastArrival.size > 0;
  }

  has(lid: LockId): boolean {
    return this.lastArrival.has(lid);
  }

  /** The repair of `lid` begins, or a packet of it arrived, at `nowNs`. */
  touch(lid: LockId, nowNs: number): void {
    this.lastArrival.set(lid, nowNs);
  }

  /** When the last packet of `lid` arrived (0 if it is not quarantined). */
  lastArrivalNs(lid: LockId): number {
    return this.lastArrival.get(lid) ?? 0;
  }

  end(lid: LockId): void {
    this.lastArrival.delete(lid);
  }
}
