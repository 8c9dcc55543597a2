import { InMemoryControlBus, MalformedTally, createSubjects, silentLogger, startControlPlane, startFailureFeed, startHeartbeatSender, startQueueRecoveryResponder, switchAnnouncement } from '@lockfabric/control';
import { NetLockNotInUseError, inProcessPurgePort, netlockPurgeRecovery } from '@lockfabric/lock-netlock-control';
import type { InProcessPurge, NetLockPurgePort } from '@lockfabric/lock-netlock-control';
import type { BusScheduler, ComputeFailures, ControlPlane, FailureFeed, FissDriverFactory, HeartbeatPublisher, Logger, QueueResponder, QueueRun } from '@lockfabric/control';
import { followAdmissionOrders, startFissRecoveryHook, startFissRecoveryResponder, startFissStuckReporter } from '@lockfabric/lock-fisslock-control';
import type { AgentPool, FissSwitchControl, GatedSwitchPort } from '@lockfabric/lock-fisslock';
import type { AdmissionOrder, FissPoolHandle, FissResponder, FissStuckReporter } from '@lockfabric/lock-fisslock-control';
import { LockFabricError } from '@lockfabric/ports';
import type { Clock, NodeId, Verbs } from '@lockfabric/ports';

/** A sim run without a NetLock switch has no switch control plane for the coordinator: the NetLock purge port's answer. */
export class SimSwitchControlUnavailableError extends LockFabricError {
  readonly code = 'SIM_SWITCH_CONTROL_UNAVAILABLE';
  constructor(readonly address: string) {
    super(`no switch control plane at ${address} in this sim run: the NetLock purge is not driven by the sim's coordinator`);
  }
}

/** Failure detection of a sim control plane (the coordinator's FailureDetector options). */
export interface SimDetectorConfig {
  readonly heartbeatIntervalMs: number;
  readonly missesBeforeSuspect: number;
  /** Detection tick; default a quarter of the heartbeat interval. */
  readonly tickMs?: number;
}

export interface SimControlPlaneOptions {
  /** The run's scheduler: every control message is an event on it (virtual under `sim`). */
  readonly scheduler: BusScheduler;
  readonly clock: Clock;
  readonly computeNodes: readonly NodeId[];
  /** Nodes that only listen (memory nodes' services): a failure feed each, no heartbeats; with `queueRecovery` also a queue-lock responder (ALock's local cohort). */
  readonly listeners?: readonly NodeId[];
  readonly detector: SimDetectorConfig;
  /** One-way latency of a control message; default 20 µs (InMemoryControlBus). */
  readonly latencyNs?: number;
  /**
   * Queue-lock (mcs, alock) recovery: each compute node answers the coordinator's gate / abort /
   * reset / resume calls with the real responder, over its run and its verbs.
   */
  readonly queueRecovery?: { readonly run: () => QueueRun | undefined; readonly verbsOf: (node: NodeId) => Verbs };
  /** Queue-lock recovery timings (the coordinator's defaults are for a live cluster: 20 s gate lease, 2 s calls). */
  readonly queueTimings?: { readonly callTimeoutMs?: number; readonly gateLeaseMs?: number; readonly drainPollMs?: number };
  readonly logger?: Logger;
  /**
   * The run's switch runs NetLock: the switch model's purge (fence, take the dead machine's entries
   * out, send the grants that makes due). The sim switch then announces a control address as a
   * switch-dataplane does, and the coordinator's real purge trigger calls this.
   */
  readonly netlockPurge?: InProcessPurge;
  /**
   * The run's switch runs FissLock: each compute node answers the coordinator's S1–S2 calls with
   * the real responder over its agent pool and gated switch link, and the coordinator's real
   * recovery hook writes S3 through the switch model's registers.
   */
  readonly fiss?: SimFissRecovery;
  /**
   * Stuck-lock reports this close to the end of the last repair are dropped (live: 2 s). Default
   * 1 ms, below the swarm's T_STUCK: at the live default a sim run got one repair in all.
   */
  readonly stuckRepairIntervalMs?: number;
}

/** What FissLock recovery needs of a sim run. */
export interface SimFissRecovery {
  /** The node's agent pool (recovery steps and policy), once its FissLock service runs. */
  poolOf(node: NodeId): FissPoolHandle | undefined;
  /** The node's agent pool itself (its stuck-lock watchdog), once its FissLock service runs. */
  agentPoolOf(node: NodeId): AgentPool | undefined;
  /** The node's switch link gate (shared by its clients and its service). */
  gateOf(node: NodeId): GatedSwitchPort;
  /** The switch model's control plane as S3 writes it (and its admission state). */
  switchControl(): FissSwitchControl;
  /** A coordinator's admission order reached the switch. */
  admit(order: AdmissionOrder): void;
}

/** The sim switch's heartbeat identity (a switch-dataplane beats as role `switch`). */
const SIM_SWITCH_NODE = 65_000;

/** The control address the sim's switch announces (a name only: the purge is a direct call). */
export const SIM_SWITCH_ADDRESS = 'sim-switch:0';

/** A FailureNotice as a compute node's feed heard it. */
export interface HeardDeath {
  readonly listener: NodeId;
  readonly node: NodeId;
  readonly atNs: number;
}

/** One coordinator life: when it started and, if it crashed, when and with what under way. */
export interface CoordinatorLife {
  readonly startedAtNs: number;
  readonly crashedAtNs?: number;
  /** At the crash: recoveries it had begun (each one a FailureNotice) and those still open. */
  readonly recoveriesBegun?: number;
  readonly recoveriesOpen?: number;
  /** At the crash: queue-lock (mcs, alock) recoveries it had driven to the end. */
  readonly queueRecoveriesDone?: number;
}

const COORDINATOR = 'coordinator';
const SWITCH = 'switch';
const party = (node: NodeId) => `compute-${node}`;

/**
 * The production control plane in a sim cluster: the coordinator's control plane of libs/control
 * (failure detector, membership and epochs, recovery book, recovery drivers) and the compute nodes'
 * halves (heartbeat sender, failure feed, queue-lock responder) over one InMemoryControlBus that
 * delivers through the run's scheduler. A compute node that is killed stops heartbeating and
 * leaves the bus; the real detector declares it dead, the real drivers run, and node services hear
 * of it through the same feed they use live (`failuresOf`).
 *
 * The coordinator can crash (its state dropped: detector, epochs, recovery book, drivers in
 * flight) and restart as a new instance that knows nothing, as `startCoordinator` after a SIGKILL.
 */
export class SimControlPlane {
  readonly bus: InMemoryControlBus;
  readonly malformed = new MalformedTally();
  private readonly subjects = createSubjects('sim');
  private readonly logger: Logger;
  private readonly heartbeats = new Map<NodeId, HeartbeatPublisher>();
  private readonly feeds = new Map<NodeId, FailureFeed>();
  private readonly responders = new Map<NodeId, QueueResponder>();
  private readonly fissResponders = new Map<NodeId, FissResponder>();
  private readonly stuckReporters = new Map<NodeId, FissStuckReporter>();
  private readonly killed = new Set<NodeId>();
  private coordinator: ControlPlane | undefined;
  private readonly heardDeaths: HeardDeath[] = [];
  private readonly deathWaiters: { node: NodeId; resolve: (atNs: number) => void }[] = [];
  /** Every coordinator life, in order. */
  readonly lives: CoordinatorLife[] = [];
  /** NetLock purges that reached the switch, over every coordinator life. */
  private purgesDone = 0;

  /** FissLock S1–S3 rounds that reached their resume (S3 written) on the compute nodes: the most any node answered. */
  get fissRecoveries(): number {
    return Math.max(0, ...[...this.fissResponders.values()].map((r) => r.answered.resume));
  }

  /** NetLock purges that reached the switch model, over every coordinator life. */
  get netlockPurges(): number {
    return this.purgesDone;
  }

  constructor(private readonly options: SimControlPlaneOptions) {
    this.bus = new InMemoryControlBus(options.scheduler, options.latencyNs === undefined ? {} : { latencyNs: options.latencyNs });
    this.logger = options.logger ?? silentLogger;
    for (const node of options.computeNodes) {
      const bus = this.bus.connect(party(node));
      const feed = startFailureFeed({ bus, subjects: this.subjects, node, logger: this.logger, malformed: this.malformed });
      feed.onComputeNodeFailed((dead) => this.heard(node, dead));
      this.feeds.set(node, feed);
      const recovery = options.queueRecovery;
      if (recovery) {
        this.responders.set(node, startQueueRecoveryResponder({ bus, subjects: this.subjects, clock: options.clock, node, run: recovery.run, verbs: recovery.verbsOf(node), logger: this.logger, malformed: this.malformed }));
      }
      const fiss = options.fiss;
      if (fiss) {
        // S1 waits out this node's pause limit (live: 15 s); sim runs last milliseconds
        this.fissResponders.set(node, startFissRecoveryResponder({ bus, subjects: this.subjects, clock: options.clock, node, pool: () => fiss.poolOf(node), gate: fiss.gateOf(node), logger: this.logger, malformed: this.malformed, pauseLimitMs: 100 }));
        // the agent pool's watchdog asks the coordinator for a per-lock repair (S1–S3), as on live
        this.stuckReporters.set(node, startFissStuckReporter({ bus, subjects: this.subjects, clock: options.clock, node, pool: () => fiss.agentPoolOf(node), logger: this.logger, attachEveryMs: 0.05, followRuns: false }));
      }
      this.heartbeats.set(node, startHeartbeatSender({ bus, subjects: this.subjects, clock: options.clock, role: 'compute', id: String(node), node, incarnation: 1, intervalMs: options.detector.heartbeatIntervalMs, logger: this.logger }));
    }
    for (const node of options.listeners ?? []) {
      const bus = this.bus.connect(party(node));
      const feed = startFailureFeed({ bus, subjects: this.subjects, node, logger: this.logger, malformed: this.malformed });
      this.feeds.set(node, feed);
      // ALock's local cohort runs on the memory node: it takes part in queue-lock recoveries
      const recovery = options.queueRecovery;
      if (recovery) {
        this.responders.set(node, startQueueRecoveryResponder({ bus, subjects: this.subjects, clock: options.clock, node, run: recovery.run, verbs: recovery.verbsOf(node), logger: this.logger, malformed: this.malformed }));
      }
    }
    if (options.fiss) this.startSwitch(options.fiss);
    this.startCoordinator();
  }

  /** The switch's control-plane side: heartbeats (so a coordinator sees it join) and its admission fence. */
  private startSwitch(fiss: SimFissRecovery): void {
    const bus = this.bus.connect(SWITCH);
    followAdmissionOrders(bus, this.subjects, this.malformed, (order) => fiss.admit(order));
    this.heartbeats.set(SIM_SWITCH_NODE, startHeartbeatSender({ bus, subjects: this.subjects, clock: this.options.clock, role: 'switch', id: 'switch-0', node: SIM_SWITCH_NODE, incarnation: 1, intervalMs: this.options.detector.heartbeatIntervalMs, logger: this.logger }));
  }

  /** What node services of `node` get as `NodeServiceContext.failures`. */
  failuresOf(node: NodeId): ComputeFailures {
    const feed = this.feeds.get(node);
    if (!feed) throw new RangeError(`no node ${node} in this control plane`);
    return feed;
  }

  /** The running coordinator's control plane; undefined while it is down. */
  get plane(): ControlPlane | undefined {
    return this.coordinator;
  }

  /** Deaths the compute nodes' feeds heard, in order (each listener, each time). */
  get deaths(): readonly HeardDeath[] {
    return this.heardDeaths;
  }

  /** Resolves with the time the first surviving node heard that `node` is dead. */
  firstHeard(node: NodeId): Promise<number> {
    const found = this.heardDeaths.find((d) => d.node === node);
    if (found) return Promise.resolve(found.atNs);
    return new Promise((resolve) => this.deathWaiters.push({ node, resolve }));
  }

  /** Compute node `node` dies like a SIGKILL: no more heartbeats, nothing more sent or heard on the bus. */
  kill(node: NodeId): void {
    if (this.killed.has(node)) return;
    this.killed.add(node);
    this.heartbeats.get(node)?.stop();
    this.responders.get(node)?.close();
    this.fissResponders.get(node)?.close();
    this.stuckReporters.get(node)?.close();
    this.feeds.get(node)?.close();
    this.bus.cut(party(node));
  }

  /**
   * Node `node` is paused (SIGSTOP) for `durationNs` from now: what reaches it over the control bus
   * (recovery calls, failure notices) is handled when it wakes. Its heartbeats go on, as in the
   * pause model of the data path (a pause shorter than detection).
   */
  pause(node: NodeId, durationNs: number): void {
    this.bus.hold(party(node), this.options.clock.nowNs() + durationNs);
  }

  /** The coordinator process dies: every piece of its state goes with it, and so do its messages in flight. */
  crashCoordinator(): void {
    if (!this.coordinator) return;
    const { recoveries, queueLocks } = this.coordinator;
    const state = { recoveriesBegun: recoveries.all().length, recoveriesOpen: recoveries.activeCount, queueRecoveriesDone: queueLocks.completed.length };
    this.coordinator.close();
    this.coordinator = undefined;
    this.bus.cut(COORDINATOR);
    const life = this.lives.pop();
    if (life) this.lives.push({ ...life, crashedAtNs: this.options.clock.nowNs(), ...state });
  }

  /**
   * A new coordinator instance starts with empty state (it warms up before its first view).
   * `mutantSkipRestartRecovery` (test only) leaves out its queue-lock repair.
   */
  restartCoordinator(options: { readonly mutantSkipRestartRecovery?: boolean } = {}): void {
    if (!this.coordinator) this.startCoordinator(options.mutantSkipRestartRecovery === true);
  }

  close(): void {
    this.coordinator?.close();
    this.coordinator = undefined;
    for (const heartbeat of this.heartbeats.values()) heartbeat.stop();
    for (const responder of this.responders.values()) responder.close();
    for (const responder of this.fissResponders.values()) responder.close();
    for (const reporter of this.stuckReporters.values()) reporter.close();
    for (const feed of this.feeds.values()) feed.close();
  }

  private startCoordinator(skipRestartRecovery = false): void {
    const { detector, queueTimings } = this.options;
    const unavailable = (address: string): never => {
      throw new SimSwitchControlUnavailableError(address);
    };
    const purge = this.options.netlockPurge;
    // a FissLock switch announces itself too: it answers the purge as a switch-dataplane does, NOT_FOUND
    const notNetLock = (address: string): never => {
      throw new NetLockNotInUseError(address, 'the sim switch runs fisslock');
    };
    const counted: InProcessPurge | undefined = purge
      ? (machine) => {
          this.purgesDone++;
          return purge(machine);
        }
      : undefined;
    const netlockPurge: NetLockPurgePort = counted ? inProcessPurgePort(counted) : { purge: async (address) => (this.options.fiss ? notNetLock(address) : unavailable(address)) };
    this.coordinator = startControlPlane({
      bus: this.bus.connect(COORDINATOR),
      subjects: this.subjects,
      clock: this.options.clock,
      logger: this.logger,
      malformed: this.malformed,
      heartbeatIntervalMs: detector.heartbeatIntervalMs,
      missesBeforeSuspect: detector.missesBeforeSuspect,
      tickMs: detector.tickMs ?? detector.heartbeatIntervalMs / 4,
      // No FissLock driver in sim: FissLock actions close with no steps (fissNotDriven). The NetLock
      // purge reaches the switch model when the run has one, else finds no switch and records that.
      machineDeathRecoveries: [netlockPurgeRecovery({ purge: netlockPurge, maxAttempts: 1 })],
      ...(this.options.fiss ? { fissRecovery: this.fissDriver(this.options.fiss) } : {}),
      queue: { ...(queueTimings ?? {}), ...(this.options.queueRecovery ? { queueHosts: () => this.options.listeners ?? [] } : {}) },
      // a restarted instance repairs what its predecessor may have left half done (the first one
      // starts with the cluster: nothing can be half done yet)
      queueRestartRecovery: this.lives.length > 0 && !skipRestartRecovery,
    });
    this.lives.push({ startedAtNs: this.options.clock.nowNs() });
    // A switch-dataplane announces its control address every second; one announcement per coordinator life is enough here.
    if (purge || this.options.fiss) this.bus.connect(SWITCH).publish(this.subjects.fissSwitch(), switchAnnouncement(SIM_SWITCH_ADDRESS));
  }

  private heard(listener: NodeId, node: NodeId): void {
    const atNs = this.options.clock.nowNs();
    this.heardDeaths.push({ listener, node, atNs });
    for (const waiter of this.deathWaiters.filter((w) => w.node === node)) {
      this.deathWaiters.splice(this.deathWaiters.indexOf(waiter), 1);
      waiter.resolve(atNs);
    }
  }

  /** The coordinator's FissLock recovery hook over the switch model, its waits scaled to a sim run. */
  private fissDriver(fiss: SimFissRecovery): FissDriverFactory {
    return (context) =>
      startFissRecoveryHook({
        ...context,
        switchControl: () => fiss.switchControl(),
        callTimeoutMs: 20,
        settleMs: 0.05,
        announceWaitMs: 5,
        pollMs: 0.05,
        stuckRepairIntervalMs: this.options.stuckRepairIntervalMs ?? 1,
        attempts: { culpritAttempts: 2, retryDelayMs: 1, maxRetryDelayMs: 10 },
      });
  }
}
