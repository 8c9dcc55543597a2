import type { LockPacket } from '@lockfabric/ports';
import { FLAG_ABORT } from '../wire.js';

/**
 * Whether a refused timeout-free (spec §5.2: the switch's INVALID FREE carrying ABORT) must leave
 * this machine's pending agent alone. The refusal says "the lock is held with ② grants and names
 * you": it is meant to have a machine with no agent build an empty one for the circulating ②
 * copies. A pending agent already accounts for the lock here, and its FREE / transfer GRANT is
 * still undecided or unanswered: that packet's own answer (accepted, or refused and then restored)
 * decides its fate. Restoring it on the abort's refusal — at inca 0 — left a second live agent
 * once the switch accepted the transfer (both links at 10 %, seed 370).
 */
export function pendingOutlivesAbortRefusal(refusal: LockPacket, hasPending: boolean): boolean {
  return hasPending && refusal.type === 'free' && (refusal.flags & FLAG_ABORT) !== 0;
}
