/** NATS header carrying the sender's membership epoch on a batch into a switch (decimal). */
export const EPOCH_HEADER = 'lockfabric-epoch';

export type AdmissionVerdict = 'pass' | 'closed' | 'stale-epoch';

export interface AdmissionState {
  readonly open: boolean;
  readonly epoch: bigint;
}

/**
 * The switch's recovery fence for lock packets (README "Admission"). Packets stamped with an epoch
 * come from members of a coordinator's membership; they are admitted only while the switch is
 * open, and only when their epoch is not older than the one it was opened (or fenced) with.
 * Unstamped packets (no coordinator in the cluster, tools, tests) are not fenced by epoch: they
 * pass whatever the state — the seq windows remain their fence. A new switch starts closed.
 * The epoch never goes down; an order naming an older epoch changes nothing.
 */
export class PacketAdmission {
  private openNow = false;
  private epochNow = 0n;
  private readonly drops = new Map<AdmissionVerdict, number>();

  get state(): AdmissionState {
    return { open: this.openNow, epoch: this.epochNow };
  }

  /** Applies a coordinator's order; returns whether it changed anything. */
  order(epoch: bigint, open: boolean): boolean {
    if (epoch < this.epochNow) return false;
    const changed = epoch !== this.epochNow || open !== this.openNow;
    this.epochNow = epoch;
    this.openNow = open;
    return changed;
  }

  /** The verdict on one batch stamped `stamp` (undefined: unstamped); refusals are counted. */
  admit(stamp: bigint | undefined): AdmissionVerdict {
    if (stamp === undefined) return 'pass';
    const verdict: AdmissionVerdict = !this.openNow ? 'closed' : stamp < this.epochNow ? 'stale-epoch' : 'pass';
    if (verdict !== 'pass') this.drops.set(verdict, (this.drops.get(verdict) ?? 0) + 1);
    return verdict;
  }

  /** Batches refused so far, by verdict. */
  dropsByReason(): Record<string, number> {
    return Object.fromEntries(this.drops);
  }
}

/** The epoch stamped in a header value; undefined when absent; NaN-like garbage counts as unstamped. */
export function parseEpochStamp(value: string | undefined): bigint | undefined {
  if (value === undefined || !/^\d{1,20}$/.test(value)) return undefined;
  return BigInt(value);
}
