import { NS_PER_MS } from '@lockfabric/ports';

/** Epochs per millisecond of wall time the time floor leaves room for. */
export const EPOCH_TIME_SHIFT = 20n;

/**
 * Membership epochs that never go backwards, across coordinator restarts too (see README):
 *
 *   next = max(last + 1, highest epoch observed on ctl.membership + 1, wallMs << 20)
 *
 * The time floor puts a restarted coordinator, which remembers nothing, above every epoch its
 * predecessor issued, as long as the predecessor issued fewer than 2^20 epochs per millisecond
 * on average and the new clock is not behind the old one by more than the restart took. The
 * observed maximum covers what the clock cannot: another coordinator's view on the subject.
 */
export class EpochSource {
  private last = 0n;

  /** The last epoch issued or observed; 0 before any. */
  get current(): bigint {
    return this.last;
  }

  /** An epoch seen elsewhere (a view on ctl.membership): the next one issued will be above it. */
  observe(epoch: bigint): void {
    if (epoch > this.last) this.last = epoch;
  }

  /** A new epoch, strictly above every epoch issued or observed before, at wall time `nowNs`. */
  next(nowNs: number): bigint {
    const floor = epochFloor(nowNs);
    this.last = this.last + 1n > floor ? this.last + 1n : floor;
    return this.last;
  }
}

/** The smallest epoch a coordinator may issue at wall time `nowNs` (any origin, as long as it is shared). */
export function epochFloor(nowNs: number): bigint {
  const ms = Math.floor(nowNs / NS_PER_MS);
  return ms > 0 ? BigInt(ms) << EPOCH_TIME_SHIFT : 0n;
}
