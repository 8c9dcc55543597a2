import type { ComputeFailures } from '@lockfabric/control';
import { NS_PER_MS } from '@lockfabric/ports';
import type { Clock, NodeId, Verbs } from '@lockfabric/ports';
import type { PauseSpec } from '@lockfabric/workloads';
import type { LockTableLayout } from '@lockfabric/ports';
import type { BusScheduler, InProcessControlPlugin, ProtocolRecoveries } from '@lockfabric/control';
import { FailureHub } from '../node-failure.js';
import type { CoordinatorCrashSpec, NodeFailureSpec } from '../node-failure.js';
import { SimControlPlane } from './sim-control-plane.js';
import type { CoordinatorLife, HeardDeath } from './sim-control-plane.js';

/** What the control plane of a run did (present when the run had one). */
export interface ControlPlaneOutcome {
  /** The coordinator's lives: one, or two and more after `coordinatorCrash`. */
  readonly lives: readonly CoordinatorLife[];
  /** Deaths the nodes' failure feeds heard. */
  readonly deaths: readonly HeardDeath[];
  /** Control messages that did not decode (0 in a healthy run). */
  readonly malformed: number;
  /** What the protocols' plug-ins counted, by name (e.g. recovery rounds run, purges that reached the switch). */
  readonly counts: Readonly<Record<string, number>>;
}

export interface RunControlOptions {
  readonly scheduler: BusScheduler;
  readonly clock: Clock;
  readonly computeNodes: readonly NodeId[];
  readonly memoryNodes: readonly NodeId[];
  readonly nodeFailure?: NodeFailureSpec;
  readonly coordinatorCrash?: CoordinatorCrashSpec;
  /** The run's protocol and lock table, for the queue-lock recovery responders. */
  readonly protocol: string;
  /** The run's protocol's recovery rules (its definition's `recovery`), for the coordinator's book. */
  readonly protocolRecoveries?: ProtocolRecoveries;
  /** The run's lock table (the object its clients register their queue-recovery groups under). */
  readonly locks: () => LockTableLayout;
  readonly verbsOf: (node: NodeId) => Verbs;
  /** The protocols' in-process control plug-ins for this run (SimControlPlaneOptions.plugins). */
  readonly plugins?: readonly InProcessControlPlugin[];
  /** Process pauses of the run: a paused node also handles control messages only when it wakes. */
  readonly pauses?: readonly PauseSpec[];
  /**
   * The run loses or duplicates switch packets (loss, duplication, cuts). With a plug-in that
   * `needsControl`, the control plane runs for it alone: loss can leave a lock only a protocol's
   * per-lock repair frees, which the coordinator runs when a node reports the lock stuck.
   */
  readonly losesPackets?: boolean;
}

/** The control plane of one in-memory run, or a feed that never fires when the run has no control faults. */
export interface RunControl {
  failuresOf(node: NodeId): ComputeFailures;
  /** `node` dies (SIGKILL); resolves with the time the first other node heard of it. */
  nodeFailed(node: NodeId): Promise<number>;
  /** Runs the `coordinatorCrash` schedule, when there is one. */
  readonly crashSchedule?: Promise<void>;
  outcome(): ControlPlaneOutcome | undefined;
  close(): void;
}

export const DEFAULT_DETECTION_MS = 2;
const DEFAULT_MISSES = 2;

/**
 * Whether a run needs the control plane: a node failure, a coordinator crash, or a run that loses
 * packets with a plug-in that needs a coordinator for it (stuck-lock reports to answer, as on live).
 */
export function runNeedsControl(options: Pick<RunControlOptions, 'nodeFailure' | 'coordinatorCrash' | 'plugins' | 'losesPackets'>): boolean {
  return options.nodeFailure !== undefined || options.coordinatorCrash !== undefined || (options.losesPackets === true && (options.plugins ?? []).some((p) => p.needsControl));
}

/**
 * Starts the sim control plane (SimControlPlane) when the run needs one (runNeedsControl); any
 * other run keeps its schedule free of control traffic (a feed that never fires).
 */
export function startRunControl(options: RunControlOptions): RunControl {
  if (!runNeedsControl(options)) {
    const idle = new FailureHub();
    return {
      failuresOf: () => idle,
      nodeFailed: () => Promise.reject(new RangeError('no control plane in this run')),
      outcome: () => undefined,
      close: () => undefined,
    };
  }
  const detectionMs = options.nodeFailure?.detectionMs ?? DEFAULT_DETECTION_MS;
  const misses = options.nodeFailure?.missesBeforeSuspect ?? DEFAULT_MISSES;
  if (!(detectionMs > 0)) throw new RangeError(`nodeFailure.detectionMs must be positive, got ${detectionMs}`);
  const plane = new SimControlPlane({
    scheduler: options.scheduler,
    clock: options.clock,
    computeNodes: options.computeNodes,
    listeners: options.memoryNodes,
    detector: { heartbeatIntervalMs: detectionMs / misses, missesBeforeSuspect: misses },
    queueRecovery: { run: () => ({ protocol: options.protocol, locks: options.locks() }), verbsOf: options.verbsOf },
    // a sim run lasts milliseconds to seconds: calls, gate lease and drain polls scaled to it
    queueTimings: { callTimeoutMs: 20, gateLeaseMs: 500, drainPollMs: 0.2 },
    ...(options.protocolRecoveries ? { protocolRecoveries: options.protocolRecoveries } : {}),
    ...(options.plugins ? { plugins: options.plugins } : {}),
  });
  for (const p of options.pauses ?? []) {
    if (p.node === undefined) continue; // a pause of single clients stops no process
    const node = p.node;
    void options.clock.sleep(p.atNs).then(() => plane.pause(node, p.durationNs));
  }
  const crash = options.coordinatorCrash;
  if (crash && !(crash.atMs >= 0 && crash.downMs >= 0)) throw new RangeError(`coordinatorCrash: atMs and downMs must be non-negative, got ${crash.atMs} and ${crash.downMs}`);
  const crashSchedule = crash
    ? (async () => {
        await options.clock.sleep(crash.atMs * NS_PER_MS);
        plane.crashCoordinator();
        await options.clock.sleep(crash.downMs * NS_PER_MS);
        plane.restartCoordinator({ mutantSkipRestartRecovery: crash.mutantSkipRestartRecovery === true, mutantIgnoreExpectedMembers: crash.mutantIgnoreExpectedMembers === true });
      })()
    : undefined;
  return {
    failuresOf: (node) => plane.failuresOf(node),
    nodeFailed: (node) => {
      plane.kill(node);
      return plane.firstHeard(node);
    },
    ...(crashSchedule ? { crashSchedule } : {}),
    outcome: () => ({ lives: [...plane.lives], deaths: [...plane.deaths], malformed: plane.malformed.count(), counts: plane.counts }),
    close: () => plane.close(),
  };
}
