import type { LockId, LockMode, LockPacket, NodeId, Trace } from '@lockfabric/ports';
import type { FissPolicy, Waiter } from './agent.js';
import type { AgentPlacement } from './home-parking.js';

export interface AgentPoolOptions {
  readonly policy: FissPolicy;
  readonly rtoNs: number;
  readonly pacingNs: number;
  /** Largest multiple of `rtoNs` the retransmission timeout backs off to (1: fixed). */
  readonly rtoMaxBackoff?: number;
  readonly starvePeriodNs: number;
  /** First delay before re-sending a packet bounced again for the same lock; doubles per bounce up to `rtoNs` (0: bounce at once). */
  readonly bounceBackoffNs?: number;
  /** Where `lock.handover` spans of agent transfers (⑧) go. */
  readonly trace?: Trace;
  /** Lock ids at or above it belong to the fallback managers: the pool ignores their packets (default: all ids are the switch's). */
  readonly switchCapacity?: number;
  /** Switches the lock ids are partitioned over (§5.4): one sequence window per switch. Default 1. */
  readonly racks?: number;
  /** How long a RELEASE must keep coming back unprocessed before the pool takes what it waits for as lost (default 10 RTO). */
  readonly stuckAfterNs?: number;
  /** T_STUCK (spec §12.9): how long a lock may stay stuck before the watchdog reports it (0: watchdog off). */
  readonly tStuckNs?: number;
  /** Test-only mutant: process duplicated sequenced packets again instead of re-ACKing them. */
  readonly mutantNoDuplicateSuppression: boolean;
  /** Test-only mutant: agents never tell the switch that a writer waits (no STARVE / ww notice). */
  readonly mutantNoStarve?: boolean;
  /** `home`: FissLock-Local, agents park at their lock's home (pool/home-parking.ts); needs `placeAtHomes`. Default `migrate`. */
  readonly placement?: AgentPlacement;
  /** Test-only mutant of FissLock-Local: a parked agent grants a local request of the other mode without the decider. */
  readonly mutantParkedModeChange?: boolean;
  /** Test-only mutant: a duplicate ACQUIRE is always queued as a waiter, even when its first copy was certainly granted ② (pool/lifetime-anchors.ts). */
  readonly mutantDupNeverGranted?: boolean;
  /** Test-only mutant: an agent restored by a repeated refusal keeps its lifetime anchors even when the lock may have moved on (wide seed 455). */
  readonly mutantTrustReRefusal?: boolean;
  /** Test-only mutant: a DUP copy of a request whose ② grant an agent here already counted may be counted again (swarm seed 492). */
  readonly mutantRecountDupGrant?: boolean;
  /** Test-only mutant: a ② copy is counted by any shared agent it reaches, whatever home it names (swarm seed 236). */
  readonly mutantCountForeignCopy?: boolean;
}

/** What a client on this machine waits for: its GRANT (or the end of its abort). */
export interface TaskListener {
  /** The lock the task asked for (a GRANT for it may still be on its way to this machine). */
  readonly lock?: LockId;
  granted(packet: LockPacket): void;
}


/** What the pool counts; read through `AgentPool.counters` (a copy). */
export interface PoolCounters {
  readonly bounced: number;
  readonly duplicates: number;
  readonly installs: number;
  readonly localGrants: number;
  readonly refusals: number;
  readonly reissuedAborts: number;
  readonly writtenOff: number;
  readonly staleReleases: number;
  readonly droppedAborts: number;
  readonly voidedOnInstall: number;
  readonly reissueDeferred: number;
  readonly abortsBehindAcquire: number;
  readonly queuedThenGranted: number;
  readonly grantedTwice: number;
  readonly orphanedCopies: number;
  /** ② copies that reached a machine other than the home they name (stale, not counted). */
  readonly foreignCopies: number;
  readonly stuckLocks: number;
  readonly parks: number;
  readonly parkedGrants: number;
  readonly lateCopiesReleased: number;
  readonly swallowedReleased: number;
  readonly staleBounces: number;
  readonly dupGrantsCounted: number;
  /** DUP copies of requests whose ② grant was already counted here, dropped (pool/counted-grants.ts). */
  readonly spentDuplicates: number;
}

export type Counts = { -readonly [K in keyof PoolCounters]: number };

export const zeroCounts = (): Counts => ({ bounced: 0, duplicates: 0, installs: 0, localGrants: 0, refusals: 0, reissuedAborts: 0, writtenOff: 0, staleReleases: 0, droppedAborts: 0, voidedOnInstall: 0, reissueDeferred: 0, abortsBehindAcquire: 0, queuedThenGranted: 0, grantedTwice: 0, orphanedCopies: 0, foreignCopies: 0, stuckLocks: 0, parks: 0, parkedGrants: 0, lateCopiesReleased: 0, swallowedReleased: 0, staleBounces: 0, dupGrantsCounted: 0, spentDuplicates: 0 });

/** An agent as recovery orders it (S2), or as a test or a harness plants it. */
export interface AgentOrder {
  readonly mode: LockMode;
  readonly inca?: number;
  readonly holders: readonly { readonly mid: NodeId; readonly task: number }[];
  readonly wqueue: readonly Waiter[];
}
