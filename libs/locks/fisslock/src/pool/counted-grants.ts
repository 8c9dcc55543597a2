import { RequestKeys } from './request-keys.js';

/** How many counted ② grants a pool remembers; the oldest is forgotten first (a bounded set). */
export const COUNTED_GRANTS_MAX = 4_096;

/**
 * Requests whose ② grant an agent of this pool has counted toward its incarnation: by the
 * decider's GRANTED copy, by a DUP copy taken for it (agent-state.ts grantedDuplicate), or
 * written off together with the holder's RELEASE (spec §13.4, receive-path.ts writeOffLostCopy).
 * A DUP copy stands for the request's first decision, which the decider counted once; after any
 * of these it must count nothing more. Counted again, it made a holder whose RELEASE had already
 * been spent and an inca one ahead of the decider's: every FREE / transfer of the lock was
 * refused and its waiters starved (both links at 10 % with a memory restart, swarm seed 492).
 */
export class CountedGrants extends RequestKeys {
  constructor(max = COUNTED_GRANTS_MAX) {
    super(max);
  }
}
