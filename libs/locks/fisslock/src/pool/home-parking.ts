import { parLockHome } from '@lockfabric/lock-parlock';
import type { LockId, NodeId } from '@lockfabric/ports';

/** `migrate`: FissLock as published; `home`: FissLock-Local (agents park at the lock's ParLock home). */
export type AgentPlacement = 'migrate' | 'home';


/**
 * FissLock-Local (FissLock §7.4): FissLock with ParLock's placement, locks co-located with the
 * clients that use them. The paper gives no mechanism; ours parks the agent (decision 0012). When
 * the last holder at a lock's home (ParLock's `lock mod n`) releases and nobody waits, the agent
 * stays there with no holder instead of sending FREE, and the decider keeps the lock held with
 * mid = home. The home's next request is then granted without a packet; a request from elsewhere
 * reaches the parked agent through the decider (③) and is granted by transfer at once.
 *
 * Two rules keep it correct (both have a mutant in the tests; the rules live in agent-state.ts):
 * - a local grant on a parked agent must not change the lock's mode (FissLock Lemma 1: the
 *   agent's mode is the decider's), so a request of the other mode frees the parked agent first
 *   and asks the decider like any request;
 * - a parked agent has no holder whose release would hand it on, so a request queued on it is
 *   handed the lock at once.
 */
export function parksAtHome(lid: LockId, machine: NodeId, computeNodes: readonly NodeId[]): boolean {
  return parLockHome(lid, computeNodes) === machine;
}
