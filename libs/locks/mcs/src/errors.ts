import { LockFabricError } from '@lockfabric/ports';
import type { LockId } from '@lockfabric/ports';

/** `release` was given a grant this client does not hold (already released, or from another client). */
export class GrantNotHeldError extends LockFabricError {
  readonly code = 'GRANT_NOT_HELD';
  constructor(
    readonly lock: LockId,
    detail: string,
  ) {
    super(`release of lock ${lock} refused: ${detail}`);
  }
}
