import type { AcquireOptions, Grant } from '@lockfabric/ports';
import type { RequestKind } from './ticket-rules.js';

export interface DslrAcquireOptions extends AcquireOptions {
  /** Slots to draw (multi-slot leasing, §9): the lease becomes slots·λ. At most `maxSlots`. */
  readonly slots?: number;
}

/**
 * A held DSLR lock. `mode` is the port mode; an update lock reports `exclusive` (it is a writer
 * that may only read until the readers ahead of it are gone, see `DslrClient.awaitWriteAccess`).
 */
export interface DslrGrant extends Grant {
  readonly kind: RequestKind;
  readonly slots: number;
  /** The word the acquiring FAA returned. */
  readonly ticket: bigint;
  /** Conservative start of the lease on this client's clock (§6.3): never later than the true grant. */
  readonly leaseStartNs: number;
  readonly leaseNs: number;
  /** Set when this ticket carried its max counter to the limit: the word the holder zeroes after release. */
  readonly resetFrom: bigint | undefined;
}
