import { LockFabricError } from '@lockfabric/ports';
import type { LockId } from '@lockfabric/ports';

/**
 * Why a lock id could not be mapped to a register index (spec §6.5):
 * - `unreachable`: the daemon did not answer any of the lookup's requests (its node is down, or
 *   every request or reply was lost);
 * - `full`: the daemon already maps its bound of ids (`idMapMaxEntries`);
 * - `refused`: the daemon answered that the request was malformed, or the node asked does not
 *   host the map (a wrong `idMapNode`);
 * - `no-service`: this machine runs no FissLock node service that knows where the daemon is.
 */
export type LockIdMapFailure = 'unreachable' | 'full' | 'refused' | 'no-service';

/** An acquire ended because its application lock id has no register index; nothing is held. */
export class LockIdMapError extends LockFabricError {
  readonly code = 'LOCK_ID_MAP';
  constructor(
    readonly lock: LockId,
    readonly failure: LockIdMapFailure,
    readonly detail: string,
  ) {
    super(`lock id ${lock} could not be mapped (${failure}): ${detail}`);
  }
}
