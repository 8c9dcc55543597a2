import { RequestKeys } from './request-keys.js';

/** How many given-up requests a pool remembers; the oldest is forgotten first (a bounded set). */
export const GIVEN_UP_MAX = 4_096;

/**
 * Requests whose abort-RELEASE (FissLock §4.2) this pool's agent answered without finding them
 * (`droppedAborts`): the request's ② copy had not come yet. Under loss a ② copy can circle behind
 * its own abort (both bounced, each with its own back-off, at a machine that had no agent yet), and
 * once the abort is answered its client has stopped waiting: the holder the late copy made was
 * one nobody releases, and the lock never freed (swarm `lossy`, seeds 113 and 292). A task id
 * names one attempt (client and request id), so once given up, nothing of it may be held again.
 * The late copy still counts toward the incarnation (the decider counted its grant) and its holder
 * is released at once, as the agent does with a timeout RELEASE that finds its ② holder.
 */
export class GivenUpRequests extends RequestKeys {
  constructor(max = GIVEN_UP_MAX) {
    super(max);
  }
}
