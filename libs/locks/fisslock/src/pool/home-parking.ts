import { parLockHome } from '@lockfabric/lock-parlock';
import type { LockId, LockMode, NodeId } from '@lockfabric/ports';
import type { Agent } from './agent.js';

/** `migrate`: FissLock as published; `home`: FissLock-Local (agents park at the lock's ParLock home). */
export type AgentPlacement = 'migrate' | 'home';

/** What a parked agent does with a local request (see HomeParking.localRequest). */
export type ParkedAnswer = 'grant' | 'free-first';

/**
 * FissLock-Local (FissLock §7.4): FissLock with ParLock's placement, locks co-located with the
 * clients that use them. The paper gives no mechanism; ours parks the agent. When the last holder
 * at a lock's home (ParLock's `lock mod n`) releases and nobody waits, the agent stays there with
 * no holder instead of sending FREE, and the decider keeps the lock held with mid = home. The
 * home's next request is then granted without a packet; a request from elsewhere reaches the
 * parked agent through the decider (③) and is granted by transfer at once.
 *
 * Two rules keep it correct (both have a mutant in the tests):
 * - a local grant on a parked agent must not change the lock's mode (FissLock Lemma 1: the
 *   agent's mode is the decider's), so a request of the other mode frees the parked agent first
 *   and asks the decider like any request;
 * - a parked agent has no holder whose release would hand it on, so a request queued on it is
 *   handed the lock at once.
 */
export class HomeParking {
  private readonly parked = new Set<LockId>();

  constructor(
    private readonly machine: NodeId,
    private readonly computeNodes: readonly NodeId[],
    /** Test-only mutant: a parked agent grants a local request of either mode and takes its mode (breaks Lemma 1). */
    private readonly mutantModeChange = false,
  ) {}

  /** Whether the last holder's release of `lid` here parks the agent instead of freeing or handing it on. */
  parks(lid: LockId, a: Agent): boolean {
    return a.holders.size === 0 && a.wqueue.length === 0 && parLockHome(lid, this.computeNodes) === this.machine;
  }

  park(lid: LockId): void {
    this.parked.add(lid);
  }

  /** An agent is parked while it has neither holders nor waiters since it was parked. */
  isParked(lid: LockId, a: Agent | undefined): a is Agent {
    if (!a || !this.parked.has(lid)) return false;
    if (a.holders.size === 0 && a.wqueue.length === 0) return true;
    this.parked.delete(lid);
    return false;
  }

  unpark(lid: LockId): void {
    this.parked.delete(lid);
  }

  /** A local request on a parked agent: granted in the parked mode, else the agent is freed first. */
  localRequest(a: Agent, mode: LockMode): ParkedAnswer {
    if (mode === a.mode) return 'grant';
    if (this.mutantModeChange) {
      a.mode = mode;
      return 'grant';
    }
    return 'free-first';
  }

  clear(): void {
    this.parked.clear();
  }

  get size(): number {
    return this.parked.size;
  }
}
