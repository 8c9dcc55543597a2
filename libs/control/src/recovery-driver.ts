import type { NodeId, Trace } from '@lockfabric/ports';
import type { DriverContext } from './driver-context.js';

/** A member a recovery driver hears of: a switch, or a compute node declared dead. */
export interface DriverMember {
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
}

/** What the control plane gives a member recovery driver beyond the bus and the books. */
export interface MemberDriverContext extends DriverContext {
  readonly trace?: Trace;
  /** The membership epoch now: every recovery call carries it. */
  readonly epoch: () => bigint;
  /** Compute nodes the failure detector holds alive. */
  readonly liveComputeNodes: () => readonly NodeId[];
  /** Whether the first membership view is out. */
  readonly hasView: () => boolean;
  /** Switch nodes the failure detector holds alive. */
  readonly liveSwitches: () => readonly NodeId[];
  /** Declares a compute node dead that cannot take part in a recovery (view, notice, recoveries). */
  readonly declareDead: (node: NodeId, reason: string) => void;
}

/**
 * A protocol's coordinator-driven recovery that follows switches as well as compute deaths (a
 * switch program whose registers must be rebuilt after a restart), contributed by the protocol's
 * control package through the catalog's coordinator plug-ins. The control plane tells it what the
 * failure detector saw and closes it; which protocol it is and what it books is its own business.
 */
export interface MemberRecoveryDriver {
  /** A switch was seen for the first time. */
  switchJoined?(member: DriverMember): void;
  /** A switch came back with a new incarnation. */
  switchBack?(member: DriverMember): void;
  /** A compute node was declared dead. */
  computeDead(member: DriverMember): void;
  close(): void;
}

export type MemberRecoveryDriverFactory = (context: MemberDriverContext) => MemberRecoveryDriver;
