import { LockFabricError } from '@lockfabric/ports';
import type { LockId } from '@lockfabric/ports';

/**
 * A release found its ticket skipped or reset while the grant's lease was still running: someone
 * broke the 2λ margin (a premature skip, a reset over live holders, a misbehaving clock), so the
 * hold may have overlapped another. Nothing was written. Unlike LeaseExpiredError this is a
 * safety failure of the protocol, not of the holder, and checkers must count the whole hold.
 */
export class LeaseBrokenError extends LockFabricError {
  readonly code = 'LEASE_BROKEN';
  constructor(
    readonly lock: LockId,
    readonly leaseRemainingMs: number,
  ) {
    super(`lock ${lock}: the ticket was skipped or reset with ${leaseRemainingMs} ms of its lease left`);
  }
}
