import type { NodeId, Trace } from '@lockfabric/ports';
import type { DriverContext } from './driver-context.js';

/** A member the FissLock recovery concerns (a switch, or a compute node declared dead). */
export interface FailedCompute {
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
}

/** What the control plane gives its FissLock recovery driver (FissLock §7.2). */
export interface FissDriverContext extends DriverContext {
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
 * The control plane's FissLock recovery (S1–S3, FissLock §7.2): libs/locks/fisslock/control's
 * `startFissRecoveryHook` live. Kept behind this interface so the control plane does not depend on
 * the FissLock protocol library (whose fallbacks depend on libraries whose tests run the sim).
 */
export interface FissRecoveryDriver {
  /** A switch was seen for the first time. */
  switchJoined(member: FailedCompute): void;
  /** A switch came back with a new incarnation. */
  switchBack(member: FailedCompute): void;
  /** A compute node was declared dead. */
  computeDead(member: FailedCompute): void;
  /** What became of stuck-lock reports (`ctl.fiss.stuck`). */
  readonly stuck: { readonly repairs: number; readonly coalesced: number };
  close(): void;
}

export type FissDriverFactory = (context: FissDriverContext) => FissRecoveryDriver;

/**
 * No FissLock recovery driver in this control plane (the sim, which has no switch control plane):
 * as the hook does when no switch announces a control address, a compute death's `fisslock`
 * action is over with no steps, and switches are not fenced.
 */
export function fissNotDriven(context: Pick<FissDriverContext, 'recoveries' | 'clock'>): FissRecoveryDriver {
  return {
    switchJoined: () => undefined,
    switchBack: () => undefined,
    computeDead: (member) => void context.recoveries.recordSteps('compute', member.id, 'fisslock', [], context.clock.nowNs()),
    stuck: { repairs: 0, coalesced: 0 },
    close: () => undefined,
  };
}
