import type { Clock, NodeId } from '@lockfabric/ports';
import type { ControlBus } from './bus.js';
import type { Logger, MalformedSink } from './logger.js';
import type { MemberRecoveryDriverFactory } from './recovery-driver.js';
import type { Subjects } from './subjects.js';

/** What a part of an in-process plug-in is started with: its party's connection to the in-memory bus. */
export interface InProcessPartyDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
}

/** A compute node's party. */
export interface InProcessNodeDeps extends InProcessPartyDeps {
  readonly node: NodeId;
}

/** What the coordinator gets from a plug-in, anew for each coordinator life. */
export interface InProcessCoordinatorPart {
  /** Its recovery drivers (ControlPlaneDeps.recoveryDrivers): S1–S3, NetLock's purge, … */
  readonly recoveryDrivers?: readonly MemberRecoveryDriverFactory[];
}

/**
 * A protocol's control-plane parts in a cluster that runs in one process (the harness's sim control
 * plane): what the catalog's coordinator and compute-node plug-ins are to the live node services.
 * The protocol's control package builds it for a run (or none, when the run does not need it); the
 * control plane starts every plug-in it was given, in order, and names no protocol.
 */
export interface InProcessControlPlugin {
  /** Its part of a compute node, started before the node heartbeats; closed when the node dies or the plane closes. */
  computeNode?(deps: InProcessNodeDeps): { close(): void };
  /** The switch is a member (it heartbeats); this part follows what the coordinator orders it. */
  switchMember?(deps: InProcessPartyDeps): void;
  /** The switch announces a control address to each coordinator life, as a switch-dataplane does. */
  readonly announcesSwitch?: boolean;
  coordinator?(): InProcessCoordinatorPart;
  /** What it counted for the run's outcome, by name. */
  counts?(): Readonly<Record<string, number>>;
  /** The run needs a control plane for this plug-in even without a node or coordinator fault. */
  readonly needsControl?: boolean;
}
