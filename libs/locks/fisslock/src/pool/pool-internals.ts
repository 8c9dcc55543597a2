import type { Clock, LockId, LockPacket, NodeId, SwitchPort } from '@lockfabric/ports';
import type { SequencedLink } from '../rack-links.js';
import type { AckStatus } from '../wire.js';
import type { AgentEvent, AgentOutcome, AgentState, AgentValue } from './agent-state.js';
import type { BounceBackoff } from './bounce-backoff.js';
import type { CountedGrants } from './counted-grants.js';
import type { GivenUpRequests } from './given-up.js';
import type { BouncedOrigins } from './lifetime-anchors.js';
import type { LifetimeMarks } from './lifetime-marks.js';
import type { AgentOrder, AgentPoolOptions, Counts, TaskListener } from './pool-types.js';
import type { LockQuarantine } from './quarantine.js';
import type { ReceiveDedup } from './receive-dedup.js';
import type { StarvationNotifier } from './starvation.js';
import type { StuckReleases } from './stuck-releases.js';
import type { StuckWatchdog } from './stuck-watchdog.js';
import type { TransferAssembly } from './transfer-assembly.js';

/**
 * What one machine's AgentPool shares with its receive path (receive-path.ts) and recovery hooks
 * (recovery-hooks.ts): its components and a few of its operations. It never leaves the pool: the
 * outside sees only AgentPool's methods.
 */
export interface PoolInternals {
  readonly machine: NodeId;
  readonly port: SwitchPort;
  readonly clock: Clock;
  readonly options: AgentPoolOptions;
  /** The current sequenced link (recovery replaces it with `setLink`). */
  readonly link: SequencedLink;
  setLink(link: SequencedLink): void;
  /** Every lock with an agent here, live or pending. */
  readonly states: Map<LockId, AgentState>;
  readonly listeners: Map<number, TaskListener>;
  readonly recordedTasks: Set<number>;
  readonly discardedTasks: Set<number>;
  readonly dedup: ReceiveDedup;
  readonly transfers: TransferAssembly;
  readonly backoff: BounceBackoff;
  readonly stuck: StuckReleases;
  readonly starvation: StarvationNotifier;
  readonly watchdog: StuckWatchdog;
  readonly marks: LifetimeMarks;
  readonly givenUp: GivenUpRequests;
  readonly countedGrants: CountedGrants;
  readonly bouncedOrigins: BouncedOrigins;
  readonly quarantined: LockQuarantine;
  readonly count: Counts;
  /** The pool was stopped (no deferred send may go out). */
  readonly stopped: boolean;
  /** Feeds one event to the lock's agent (pool `step`) and carries out its actions. */
  apply(lid: LockId, event: AgentEvent): AgentOutcome;
  newAgentId(): number;
  agentOf(lid: LockId): AgentValue | undefined;
  pendingAgentOf(lid: LockId): AgentValue | undefined;
  liveAgents(): [LockId, AgentValue][];
  pendingAgents(): [LockId, AgentValue][];
  restoreAgent(lid: LockId, order: AgentOrder): void;
  timeoutFreeUnsafe(lid: LockId, task: number): boolean;
  tryLocalRelease(lid: LockId, task: number): 'done' | 'no-agent' | 'not-found';
  /** A GRANT reaches its task, or is released at once when nobody waits for it (receive path). */
  deliver(g: LockPacket): void;
  /** Acknowledges a sequenced packet from `src` (receive path). */
  ack(p: LockPacket, src: NodeId, status: AckStatus, dup?: boolean): void;
  /** A packet of a quarantined lock arrived: true if the quarantine took it (recovery hooks). */
  absorbQuarantined(p: LockPacket): boolean;
  streamOf(p: LockPacket): number;
  stop(): void;
}
