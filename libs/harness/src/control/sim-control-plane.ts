import { InMemoryControlBus, MalformedTally, createSubjects, silentLogger, startControlPlane, startFailureFeed, startHeartbeatSender, startQueueRecoveryResponder, switchAnnouncement } from '@lockfabric/control';
import type { BusScheduler, ComputeFailures, ControlPlane, FailureFeed, HeartbeatPublisher, InProcessControlPlugin, Logger, ProtocolRecoveries, QueueResponder, QueueRun } from '@lockfabric/control';
import type { Clock, NodeId, Verbs } from '@lockfabric/ports';

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
  /** Nodes that only listen (memory nodes' services): a failure feed each, no heartbeats; with `queueRecovery` also a queue-lock responder (a queue lock's cohort beside its table). */
  readonly listeners?: readonly NodeId[];
  readonly detector: SimDetectorConfig;
  /** One-way latency of a control message; default 20 µs (InMemoryControlBus). */
  readonly latencyNs?: number;
  /**
   * Queue-lock recovery (libs/control queue-lock-recovery): each compute node answers the coordinator's gate / abort /
   * reset / resume calls with the real responder, over its run and its verbs.
   */
  readonly queueRecovery?: { readonly run: () => QueueRun | undefined; readonly verbsOf: (node: NodeId) => Verbs };
  /** Queue-lock recovery timings (the coordinator's defaults are for a live cluster: 20 s gate lease, 2 s calls). */
  readonly queueTimings?: { readonly callTimeoutMs?: number; readonly gateLeaseMs?: number; readonly drainPollMs?: number };
  readonly logger?: Logger;
  /** The run's protocol's recovery rules, for the coordinator's recovery book (other protocols' locks are not in the run). */
  readonly protocolRecoveries?: ProtocolRecoveries;
  /**
   * The protocols' parts of the control plane (their control packages' in-process plug-ins: node
   * responders, the switch as a member, the coordinator's recovery drivers), started in this order.
   */
  readonly plugins?: readonly InProcessControlPlugin[];
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
  /** At the crash: queue-lock recoveries it had driven to the end. */
  readonly queueRecoveriesDone?: number;
}

/** Test-only changes to a restarted coordinator (CoordinatorCrashSpec). */
export interface RestartMutants {
  readonly mutantSkipRestartRecovery?: boolean;
  readonly mutantIgnoreExpectedMembers?: boolean;
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
  /** The plug-ins' parts of each compute node. */
  private readonly nodeParts = new Map<NodeId, { close(): void }[]>();
  private readonly plugins: readonly InProcessControlPlugin[];
  private readonly killed = new Set<NodeId>();
  private coordinator: ControlPlane | undefined;
  private readonly heardDeaths: HeardDeath[] = [];
  private readonly deathWaiters: { node: NodeId; resolve: (atNs: number) => void }[] = [];
  /** Every coordinator life, in order. */
  readonly lives: CoordinatorLife[] = [];

  /** What the plug-ins counted, by name (recovery rounds, purges). */
  get counts(): Readonly<Record<string, number>> {
    return Object.assign({}, ...this.plugins.map((p) => p.counts?.() ?? {})) as Record<string, number>;
  }

  constructor(private readonly options: SimControlPlaneOptions) {
    this.bus = new InMemoryControlBus(options.scheduler, options.latencyNs === undefined ? {} : { latencyNs: options.latencyNs });
    this.logger = options.logger ?? silentLogger;
    this.plugins = options.plugins ?? [];
    for (const node of options.computeNodes) {
      const bus = this.bus.connect(party(node));
      const feed = startFailureFeed({ bus, subjects: this.subjects, node, logger: this.logger, malformed: this.malformed });
      feed.onComputeNodeFailed((dead) => this.heard(node, dead));
      this.feeds.set(node, feed);
      const recovery = options.queueRecovery;
      if (recovery) {
        this.responders.set(node, startQueueRecoveryResponder({ bus, subjects: this.subjects, clock: options.clock, node, run: recovery.run, verbs: recovery.verbsOf(node), logger: this.logger, malformed: this.malformed }));
      }
      const deps = { bus, subjects: this.subjects, clock: options.clock, node, logger: this.logger, malformed: this.malformed };
      this.nodeParts.set(node, this.plugins.flatMap((p) => (p.computeNode ? [p.computeNode(deps)] : [])));
      this.heartbeats.set(node, startHeartbeatSender({ bus, subjects: this.subjects, clock: options.clock, role: 'compute', id: String(node), node, incarnation: 1, intervalMs: options.detector.heartbeatIntervalMs, logger: this.logger }));
    }
    for (const node of options.listeners ?? []) {
      const bus = this.bus.connect(party(node));
      const feed = startFailureFeed({ bus, subjects: this.subjects, node, logger: this.logger, malformed: this.malformed });
      this.feeds.set(node, feed);
      // a queue lock's local cohort may run on the memory node: it takes part in queue-lock recoveries
      const recovery = options.queueRecovery;
      if (recovery) {
        this.responders.set(node, startQueueRecoveryResponder({ bus, subjects: this.subjects, clock: options.clock, node, run: recovery.run, verbs: recovery.verbsOf(node), logger: this.logger, malformed: this.malformed }));
      }
    }
    const switchParts = this.plugins.filter((p) => p.switchMember);
    if (switchParts.length > 0) this.startSwitch(switchParts);
    this.startCoordinator();
  }

  /** The switch's control-plane side: the plug-ins' parts (what the coordinator orders it), then heartbeats (so a coordinator sees it join). */
  private startSwitch(parts: readonly InProcessControlPlugin[]): void {
    const bus = this.bus.connect(SWITCH);
    for (const part of parts) part.switchMember?.({ bus, subjects: this.subjects, clock: this.options.clock, logger: this.logger, malformed: this.malformed });
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
    for (const part of this.nodeParts.get(node) ?? []) part.close();
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
   * Test only: `mutantSkipRestartRecovery` leaves out its queue-lock repair,
   * `mutantIgnoreExpectedMembers` its watch of the run's compute nodes it has not heard yet.
   */
  restartCoordinator(options: RestartMutants = {}): void {
    if (!this.coordinator) this.startCoordinator(options);
  }

  close(): void {
    this.coordinator?.close();
    this.coordinator = undefined;
    for (const heartbeat of this.heartbeats.values()) heartbeat.stop();
    for (const responder of this.responders.values()) responder.close();
    for (const parts of this.nodeParts.values()) for (const part of parts) part.close();
    for (const feed of this.feeds.values()) feed.close();
  }

  private startCoordinator(mutants: RestartMutants = {}): void {
    const { detector, queueTimings } = this.options;
    const parts = this.plugins.map((p) => p.coordinator?.() ?? {});
    const recoveryDrivers = parts.flatMap((p) => p.recoveryDrivers ?? []);
    this.coordinator = startControlPlane({
      bus: this.bus.connect(COORDINATOR),
      subjects: this.subjects,
      clock: this.options.clock,
      logger: this.logger,
      malformed: this.malformed,
      heartbeatIntervalMs: detector.heartbeatIntervalMs,
      missesBeforeSuspect: detector.missesBeforeSuspect,
      // the run's compute nodes, as a deployment's configuration names them
      expectedComputeNodes: this.options.computeNodes,
      ...(mutants.mutantIgnoreExpectedMembers ? { mutantIgnoreExpectedMembers: true } : {}),
      tickMs: detector.tickMs ?? detector.heartbeatIntervalMs / 4,
      ...(this.options.protocolRecoveries ? { protocolRecoveries: this.options.protocolRecoveries } : {}),
      ...(recoveryDrivers.length > 0 ? { recoveryDrivers } : {}),
      queue: { ...(queueTimings ?? {}), ...(this.options.queueRecovery ? { queueHosts: () => this.options.listeners ?? [] } : {}) },
      // a restarted instance repairs what its predecessor may have left half done (the first one
      // starts with the cluster: nothing can be half done yet)
      queueRestartRecovery: this.lives.length > 0 && mutants.mutantSkipRestartRecovery !== true,
    });
    this.lives.push({ startedAtNs: this.options.clock.nowNs() });
    // A switch-dataplane announces its control address every second; one announcement per coordinator life is enough here.
    if (this.plugins.some((p) => p.announcesSwitch)) this.bus.connect(SWITCH).publish(this.subjects.switchAnnounce(), switchAnnouncement(SIM_SWITCH_ADDRESS));
  }

  private heard(listener: NodeId, node: NodeId): void {
    const atNs = this.options.clock.nowNs();
    this.heardDeaths.push({ listener, node, atNs });
    for (const waiter of this.deathWaiters.filter((w) => w.node === node)) {
      this.deathWaiters.splice(this.deathWaiters.indexOf(waiter), 1);
      waiter.resolve(atNs);
    }
  }
}
