import { HistoryRecorder, checkHistory, clipExpiredLeases, clipLostTableHolds, historyDigest } from '@lockfabric/check';
import type { Verdict } from '@lockfabric/check';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import type { NodeService, ProtocolDefinition, ProtocolOptions, SwarmEndView } from '@lockfabric/locks-common';
import { NO_FAULTS } from '@lockfabric/switch';
import type { FaultSpec } from '@lockfabric/switch';
import { buildSwitchProgram } from './switch-programs.js';
import { runControlPlugins } from './control-plugins.js';
import { rackClusterConfig, rackProtocolOptions, switchDecisionsOfRacks, switchPacketsPerRack } from './rack-wiring.js';
import { severablePorts } from './node-failure.js';
import { partitionedPorts } from './partition.js';
import type { PartitionSpec } from './partition.js';
import { scheduleFlushedVerbs } from './flushed-verbs.js';
import type { FlushedVerbsOutcome, FlushedVerbsSpec } from './flushed-verbs.js';
import type { CoordinatorCrashSpec, MemoryRestartOutcome, MemoryRestartSpec, NodeFailureOutcome, NodeFailureSpec } from './node-failure.js';
import { startRunControl } from './control/run-control.js';
import type { ControlPlaneOutcome } from './control/run-control.js';
import { NS_PER_MS, RunAbortedError, lockAddress } from '@lockfabric/ports';
import { clientKey } from '@lockfabric/ports';
import type { ClientAddress, LockId, Trace } from '@lockfabric/ports';
import { createEmbeddedCluster, createSimCluster } from '@lockfabric/sim';
import type { InMemoryCluster, InMemorySubstrate, LockManagerCpuConfig, LockManagerCpuStats } from '@lockfabric/sim';
import { AppRunLog, CS_DATA_REGION_BYTES, RunStats, VerbAccounting, appDataImages, checkAppRun, driftingPorts, pausablePorts, runClients, summarize } from '@lockfabric/workloads';
import type { AppCheck, ClockDrift, DataRegions, PauseSpec, RunSummary, TxnLogEntry, WorkloadSpec } from '@lockfabric/workloads';
import { healProbe } from './heal-probe.js';
import { modelClusterSpec, modelLockManagerCpu, modelProtocolOptions } from './cost-model-wiring.js';
import type { CostModel, NicLoad } from '@lockfabric/fabric';
import type { HealOutcome, HealSpec } from './heal-probe.js';

export interface InMemoryRunOptions {
  readonly substrate: InMemorySubstrate;
  readonly protocol: ProtocolDefinition;
  readonly protocolOptions?: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly computeNodes?: number;
  readonly memoryNodes?: number;
  /** Clients placed on memory node 0 itself (co-located with the lock words). */
  readonly colocatedClients?: number;
  readonly crashProbability?: number;
  /** Fault: a client skips a release with this probability and carries on (ShiftLock Fig. 13). */
  readonly skipReleaseProbability?: number;
  /** Schedule perturbation: extra random delay per verb batch and message (sim only). */
  readonly jitterNs?: number;
  readonly trace?: Trace;
  /** Switch packet faults, for protocols that run through the switch. */
  readonly switchFaults?: FaultSpec;
  /** Machine–switch link order (sim): see InMemoryClusterConfig.switchLinks. */
  readonly switchLinks?: 'fifo' | 'jittered';
  /** Called now and then with the fraction done (by time or operations). */
  readonly onProgress?: (fraction: number) => void;
  /** Measure the run's processor time (`cpuMs`): two getrusage calls a run, which a swarm seed does not read. */
  readonly measureCpu?: boolean;
  /**
   * Fault: a compute node fails (its clients, node service and heartbeats go silent). The run's
   * control plane (the coordinator's real failure detector and recovery drivers over the sim's
   * in-memory bus, harness/src/control) declares it dead after `detectionMs` of silence, and node
   * services are told through `NodeServiceContext.failures`. Its clients' history ends at the
   * failure; they count as failed clients for the checker.
   */
  readonly nodeFailure?: NodeFailureSpec;
  /**
   * Fault: the coordinator crashes `atMs` into the run, losing all its state, and a new instance
   * starts `downMs` later (`{ atMs: 12, downMs: 5 }`). It runs the same control plane as
   * `nodeFailure` (started for either option) and can be combined with it, e.g. to crash the
   * coordinator between a node's death and its detection or in the middle of its recovery. The
   * restarted coordinator warms up for one suspicion timeout (`nodeFailure.detectionMs`, default
   * 2 ms) before its first view; a compute node of the run that died while no coordinator heard
   * it is declared dead one timeout after the restart (it is expected, and recalled if a view
   * listed it). `result.control.lives` shows the crash.
   */
  readonly coordinatorCrash?: CoordinatorCrashSpec;
  /** Fault: a memory node restarts mid-run and comes back with an empty table (see MemoryRestartSpec). */
  readonly memoryRestart?: MemoryRestartSpec;
  /**
   * Sim only, opt-in: node services (agent pools, lock servers) pay `packetNs` of one of their
   * machine's lock-manager cores per packet (see InMemoryClusterConfig.lockManagerCpu).
   */
  readonly lockManagerCpu?: LockManagerCpuConfig;
  /**
   * Sim only: the hardware the run is charged for (NIC service times and inbound ceilings, link and
   * switch latencies, lock-manager CPU). Absent: the cluster's own defaults (the `ideal` model).
   * Explicit `switchLinks` and `lockManagerCpu` options win over the model's.
   */
  readonly costModel?: CostModel;
  /**
   * Indices into the compute nodes that host clients (round-robin); default all. Lets a
   * dedicated lock-server node (SrvLock, NetLock: the lowest compute node) run no clients.
   */
  readonly clientComputeNodes?: readonly number[];
  /** Process pauses (every client of a node stops, posted verbs held), from the run's start. */
  readonly pauses?: readonly PauseSpec[];
  /** Network cuts of whole nodes (the process runs on; see partitionedPorts), from the run's start. */
  readonly partitions?: readonly PartitionSpec[];
  /** Sim, fault: lost completions (queue pairs break with verbs in flight; see FlushedVerbsSpec). */
  readonly flushedVerbs?: FlushedVerbsSpec;
  /**
   * After the workload (and the node failure, if any): switch faults are turned off and one fresh
   * client on a surviving compute node must acquire every lock within the budget (see healProbe).
   */
  readonly heal?: HealSpec;
  /** Keep each lock's table word this long after the workload ended, before healing (`lockWords` of the result). */
  readonly recordLockWordsAfterMs?: number;
  /** Per node id: the clock its clients' protocol code and its node service read (histories keep true time). */
  readonly clockDrift?: Readonly<Record<number, ClockDrift>>;
  /** Transactional runs (`spec.transactions`): receives each committed transaction of the surviving clients. */
  readonly onTxnCommit?: (entry: TxnLogEntry) => void;
  /** Where the clients' verbs and phases are counted (default: a fresh one); tests pass mutant timers. */
  readonly accounting?: VerbAccounting;
  /** Racks, one switch each, the lock ids partitioned over them (FissLock §5.4); default 1. */
  readonly racks?: number;
  /** Test-only mutant: machines of odd racks route each lock to the wrong rack's switch (rack-wiring.ts). */
  readonly mutantShiftedRackRouting?: boolean;
  /** Test-only mutant: FissLock recovery's S3 writes rack 0's switch only. */
  readonly mutantRecoverFirstRackOnly?: boolean;
  /** Test-only mutant: the protocol is not told the rack count, so a machine numbers its packets to every switch in one window. */
  readonly mutantOneSeqWindow?: boolean;
  /**
   * Test-only mutants of the sim per-lock repair (FissLock): `unanswered`, a run that only loses
   * packets gets no control plane, so no stuck-lock report is answered; `once-per-run`, the
   * coordinator drops reports for the live 2 s after a repair, i.e. for the rest of a sim run;
   * `unconfirmed`, it repairs a stalled-queue suspicion without asking the nodes.
   */
  readonly mutantStuckRepair?: 'unanswered' | 'once-per-run' | 'unconfirmed';
  /**
   * Sim: the protocol's own invariants (its swarm profile's), checked once the run and its heal
   * probe finished, before the node services stop; what it returns is `endProblems`.
   */
  readonly endCheck?: (end: SwarmEndView) => Promise<readonly string[]>;
}

/** Switch packets of the run may be lost or duplicated: a loss or duplication rule, or a cut. */
function losesPackets(options: InMemoryRunOptions): boolean {
  const rules = options.switchFaults?.rules ?? [];
  return rules.some((r) => (r.loss ?? 0) > 0 || (r.duplicate ?? 0) > 0) || (options.partitions?.length ?? 0) > 0;
}

export interface InMemoryRunResult {
  readonly substrate: InMemorySubstrate;
  readonly protocol: string;
  readonly summary: RunSummary;
  readonly verdict: Verdict;
  readonly history: HistoryRecorder;
  readonly digest: string;
  /** Verbs served by every NIC, by opcode. */
  readonly verbs: Readonly<Record<string, number>>;
  /** Verbs the clients issued, by the phase that issued them. */
  readonly accounting: VerbAccounting;
  readonly nicCounters: ReturnType<InMemoryCluster['nicCounters']>;
  readonly crashed: ReadonlyMap<string, number>;
  /** Events executed and wall time, for the simulator's own speed. */
  readonly simEvents: number;
  readonly wallMs: number;
  /**
   * Processor time (user + system, all threads of the process) over the same span as `wallMs`: on
   * a shared machine the wall clock also counts the time other processes had the core. Only with `measureCpu`.
   */
  readonly cpuMs?: number;
  /** Set when the run was cut off with acquires still pending (sim safety stop). */
  readonly cutOff: boolean;
  /** The node failure of `nodeFailure`, once it happened. */
  readonly nodeFailure?: NodeFailureOutcome;
  /** The memory-node restart of `memoryRestart`, once it happened. */
  readonly memoryRestart?: MemoryRestartOutcome;
  /** What `flushedVerbs` did: queue-pair breaks, verbs flushed, and how many of those ran. */
  readonly flushedVerbs?: FlushedVerbsOutcome;
  /** What the run's control plane did, when `nodeFailure` or `coordinatorCrash` gave it one. */
  readonly control?: ControlPlaneOutcome;
  /** Lock-manager queue counters per machine, when `lockManagerCpu` was set. */
  readonly lockManagerCpu?: Record<string, LockManagerCpuStats>;
  /** Sim: each NIC's inbound-ceiling load, by node id (memory nodes first). */
  readonly nicLoads?: Record<string, NicLoad>;
  /** The cost model the run was charged with (sim with `costModel`). */
  readonly costModel?: CostModel;
  /** The switch program's decisions by name (packets per decision), when the run has a switch (every rack's, added up). */
  readonly switchDecisions?: Readonly<Record<string, number>>;
  /** Packets each rack's switch processed, in rack order, when the run has a switch. */
  readonly switchPackets?: readonly number[];
  /** The liveness probe of `heal`, once it ran. */
  readonly heal?: HealOutcome;
  /** Application runs (`spec.application`): what the clients did and the application's check. */
  readonly application?: { readonly log: AppRunLog; readonly check: AppCheck };
  /**
   * With `recordLockWordsAfterMs`: each lock's first 64-bit table word that long after the
   * workload ended, before the heal probe touched it (quiescence checks, e.g. DSLR's conservation I4).
   */
  readonly lockWords?: readonly bigint[];
  /** What `endCheck` found (empty: nothing); absent when it did not run. */
  readonly endProblems?: readonly string[];
}

/** Runs one workload on `sim` or `embedded` and checks the history. */
export async function runInMemory(options: InMemoryRunOptions): Promise<InMemoryRunResult> {
  const { protocol } = options;
  const { spec } = options;
  // A cost model only means something in virtual time; it also sizes the protocol's timers to it.
  const model = options.substrate === 'sim' ? options.costModel : undefined;
  if (model) options = { ...options, protocolOptions: modelProtocolOptions(model, protocol, options.protocolOptions) };
  // `--racks R` or the protocol's own `racks` option (`--opt racks=R`, what a swarm reproduction line carries)
  const stated = options.protocolOptions?.['racks'];
  const racks = options.racks ?? (stated === undefined ? 1 : Number(stated));
  if ((racks !== 1 || stated !== undefined) && options.mutantOneSeqWindow !== true) options = { ...options, protocolOptions: rackProtocolOptions(protocol, racks, options.protocolOptions) };
  const switchProgramOf = () => buildSwitchProgram(protocol.switchProgram!, spec, options.protocolOptions, protocol.buildSwitchProgram?.bind(protocol));
  // the protocols' control plug-ins (a recovery may gate each machine's switch link, as the compute node process does)
  const controlPlugins = runControlPlugins(protocol, {
    ...(options.protocolOptions ? { protocolOptions: options.protocolOptions } : {}),
    ...(options.mutantRecoverFirstRackOnly ? { mutantFirstRackOnly: true } : {}),
    ...(options.mutantStuckRepair === 'once-per-run' ? { stuckRepairIntervalMs: 2_000 } : {}),
    ...(options.mutantStuckRepair === 'unconfirmed' ? { mutantRepairSuspicionUnconfirmed: true } : {}),
  });
  const lockManagerCpu = options.lockManagerCpu ?? (model ? modelLockManagerCpu(model, protocol) : undefined);
  const clusterSpec = {
    ...(model ? modelClusterSpec(model) : {}),
    seed: spec.seed,
    lockCount: spec.locks,
    entryBytes: protocol.entryBytes,
    computeNodes: options.computeNodes ?? 2,
    memoryNodes: options.memoryNodes ?? 1,
    ...(options.jitterNs !== undefined ? { jitterNs: options.jitterNs } : {}),
    ...(options.trace ? { trace: options.trace } : {}),
    ...(protocol.switchProgram ? { switchProgram: switchProgramOf() } : {}),
    ...(racks > 1 ? { racks: rackClusterConfig(racks, switchProgramOf, model, options.mutantShiftedRackRouting === true) } : {}),
    ...(options.switchFaults ? { switchFaults: options.switchFaults } : {}),
    ...(options.switchLinks ? { switchLinks: options.switchLinks } : {}),
    ...(lockManagerCpu ? { lockManagerCpu } : {}),
    ...(controlPlugins.switchPortWrapper ? { switchPortWrapper: controlPlugins.switchPortWrapper } : {}),
    ...(options.memoryRestart ? { memoryRestarts: options.memoryRestart.mutantUnfenced ? ('mutant-unfenced' as const) : true } : {}),
    ...(options.flushedVerbs ? { flushableQueuePairs: true } : {}),
  };
  if (options.flushedVerbs && options.substrate !== 'sim') throw new RangeError('flushedVerbs: lost completions are a sim fault');
  const wallStart = performance.now();
  const cpuStart = options.measureCpu ? process.cpuUsage() : undefined;
  const built = options.substrate === 'sim' ? createSimCluster(clusterSpec) : createEmbeddedCluster(clusterSpec);
  const { cluster } = built;
  const colocated = Math.min(options.colocatedClients ?? 0, spec.clients);
  // A memory-node restart is a process restart: clients running inside it would die with it.
  if (options.memoryRestart && colocated > 0) throw new RangeError('memoryRestart: clients co-located on the memory node are not modelled across its restart');
  const clientNodes = clientComputeNodes(cluster.computeNodeIds, options.clientComputeNodes);
  const addresses: ClientAddress[] = Array.from({ length: spec.clients }, (_, i) => ({
    node: i < colocated ? cluster.memoryNodeIds[0]! : clientNodes[i % clientNodes.length]!,
    client: i,
  }));
  const control = startRunControl({
    scheduler: built.scheduler,
    clock: cluster.clock,
    computeNodes: cluster.computeNodeIds,
    memoryNodes: cluster.memoryNodeIds,
    ...(options.nodeFailure ? { nodeFailure: options.nodeFailure } : {}),
    ...(options.coordinatorCrash ? { coordinatorCrash: options.coordinatorCrash } : {}),
    protocol: protocol.id,
    locks: () => cluster.layout,
    verbsOf: (node) => cluster.servicePorts({ node, client: SERVICE_CLIENT }).verbs,
    protocolRecoveries: new Map([[protocol.id, protocol.recovery]]),
    plugins: controlPlugins.attach(cluster, clusterSpec.switchProgram),
    ...(losesPackets(options) && options.mutantStuckRepair !== 'unanswered' ? { losesPackets: true } : {}),
    // The control plane treats a cut like a pause: what reaches the node over the bus waits for the heal.
    ...(options.pauses || options.partitions ? { pauses: [...(options.pauses ?? []), ...(options.partitions ?? [])] } : {}),
  });
  const runStartNs = cluster.clock.nowNs();
  let healing = false;
  const flushed = options.flushedVerbs ? scheduleFlushedVerbs(options.flushedVerbs, options.partitions ?? [], cluster, built.scheduler, runStartNs, () => healing) : undefined;
  const cutOf = (node: number) => (options.partitions ?? []).filter((p) => p.node === node).map((p) => ({ fromNs: runStartNs + p.atNs, toNs: runStartNs + p.atNs + p.durationNs }));
  const victimNode = options.nodeFailure ? cluster.computeNodeIds[options.nodeFailure.computeNode] : undefined;
  if (options.nodeFailure && victimNode === undefined) throw new RangeError(`nodeFailure: no compute node ${options.nodeFailure.computeNode}`);
  let victimDead = false;
  // Node services (agent pools, lock servers, recovery) start before any client.
  const services: NodeService[] = [];
  // A pause stops the whole process: the node's service as well as its clients.
  const servicePorts = (node: number) => {
    const base = cluster.servicePorts({ node, client: SERVICE_CLIENT });
    const drift = options.clockDrift?.[node];
    const ports = drift ? driftingPorts(base, drift) : base;
    const startNs = cluster.clock.nowNs();
    const windows = (options.pauses ?? []).filter((p) => p.node === node).map((p) => ({ fromNs: startNs + p.atNs, toNs: startNs + p.atNs + p.durationNs }));
    return partitionedPorts(pausablePorts(ports, windows, 0), cutOf(node));
  };
  // A memory node's service runs in the node's current incarnation (a restart starts it anew).
  const serviceContext = (node: number) => ({ ports: servicePorts(node), memoryNodes: cluster.memoryNodeIds, computeNodes: cluster.computeNodeIds, failures: control.failuresOf(node), incarnation: cluster.incarnationOf(node) });
  const memoryServices = new Map<number, NodeService>();
  const startMemoryService = (node: number) => {
    const service = protocol.services?.memory?.(serviceContext(node), options.protocolOptions);
    if (service) memoryServices.set(node, service);
  };
  for (const node of cluster.memoryNodeIds) startMemoryService(node);
  let victimService: NodeService | undefined;
  const computeServices = new Map<number, NodeService>();
  for (const node of cluster.computeNodeIds) {
    const service = protocol.services?.compute?.(serviceContext(node), options.protocolOptions);
    if (service) services.push(service);
    if (service) computeServices.set(node, service);
    if (node === victimNode) victimService = service;
  }
  const ports = addresses.filter((a) => a.node !== victimNode).map((address) => partitionedPorts(cluster.clientPorts(address), cutOf(address.node)));
  const victimPorts = addresses.filter((a) => a.node === victimNode).map((address) => severablePorts(partitionedPorts(cluster.clientPorts(address), cutOf(address.node)), () => victimDead));
  const recorder = new HistoryRecorder();
  const stats = new RunStats();
  const accounting = options.accounting ?? new VerbAccounting();
  // Application data (objects, tree nodes) sits on the memory nodes beside the locks.
  const app = spec.application;
  const dataRegions: DataRegions | undefined = app ? cluster.registerDataRegions(appDataImages(app, spec.locks, cluster.memoryNodeIds.length)) : undefined;
  const appLog = app ? new AppRunLog() : undefined;
  // Critical sections of data verbs (--cs-verbs) reach a bounded data region on every memory node.
  const csDataRegions: DataRegions | undefined = (spec.csVerbs ?? 0) > 0 ? cluster.registerDataRegions(cluster.memoryNodeIds.map(() => new Uint8Array(CS_DATA_REGION_BYTES))) : undefined;
  let finished = false;
  const common = {
    protocol,
    ...(options.protocolOptions ? { protocolOptions: options.protocolOptions } : {}),
    spec,
    clock: cluster.clock,
    ...(options.crashProbability ? { crashProbability: options.crashProbability } : {}),
    ...(options.skipReleaseProbability ? { skipReleaseProbability: options.skipReleaseProbability } : {}),
    ...(options.pauses ? { pauses: options.pauses } : {}),
    ...(options.clockDrift ? { clockDrift: (node: number) => options.clockDrift?.[node] } : {}),
    ...(dataRegions ? { dataRegions } : {}),
    ...(csDataRegions ? { csDataRegions } : {}),
  };
  const survivorsRun = runClients({ ...common, ports, recorder, stats, accounting, ...(options.onTxnCommit ? { onTxnCommit: options.onTxnCommit } : {}), ...(appLog ? { appLog } : {}) });
  // The failing node's clients record apart: only what happened before the failure is kept.
  const victimRecorder = new HistoryRecorder();
  const victimStop = new AbortController();
  const victimsRun = victimPorts.length > 0 ? runClients({ ...common, ports: victimPorts, recorder: victimRecorder, stats: new RunStats(), signal: victimStop.signal }) : undefined;
  let failure: NodeFailureOutcome | undefined;
  const failureDone = options.nodeFailure && victimNode !== undefined ? failNode(options.nodeFailure, victimNode) : undefined;
  async function failNode(plan: NodeFailureSpec, node: number): Promise<void> {
    await cluster.clock.sleep(plan.atMs * NS_PER_MS);
    const failedAtNs = cluster.clock.nowNs();
    victimDead = true;
    victimStop.abort(new RunAbortedError(`node ${node} failed`));
    const heard = control.nodeFailed(node);
    await victimService?.stop();
    const reportedAtNs = await heard;
    failure = { node, failedAtNs, reportedAtNs };
  }
  let memoryRestarted: MemoryRestartOutcome | undefined;
  const memoryRestartDone = options.memoryRestart ? restartMemory(options.memoryRestart) : undefined;
  async function restartMemory(plan: MemoryRestartSpec): Promise<void> {
    const node = cluster.memoryNodeIds[plan.memoryNode ?? 0];
    if (node === undefined) throw new RangeError(`memoryRestart: no memory node ${plan.memoryNode}`);
    await cluster.clock.sleep(plan.atMs * NS_PER_MS);
    const crashedAtNs = cluster.clock.nowNs();
    cluster.crashMemoryNode(node);
    const old = memoryServices.get(node);
    memoryServices.delete(node);
    await old?.stop();
    await cluster.clock.sleep(plan.downMs * NS_PER_MS);
    cluster.restartMemoryNode(node);
    startMemoryService(node);
    memoryRestarted = { node, crashedAtNs, restartedAtNs: cluster.clock.nowNs(), incarnation: cluster.incarnationOf(node) };
  }
  // The failed node's clients are not waited for: severed, they may retry until their own limits.
  void victimsRun?.catch(() => undefined);
  let healed: HealOutcome | undefined;
  let lockWords: bigint[] | undefined;
  const run = Promise.all([survivorsRun, failureDone, control.crashSchedule, memoryRestartDone])
    .then(async ([survivors]) => {
      if (options.recordLockWordsAfterMs !== undefined) {
        // Given-up waiters may still be releasing their tickets in the background.
        await cluster.clock.sleep(options.recordLockWordsAfterMs * NS_PER_MS);
        lockWords = Array.from({ length: spec.locks }, (_, lock: LockId) => {
          const addr = lockAddress(cluster.layout, lock);
          return cluster.node(addr.node).memory.cpuLoad(addr);
        });
      }
      healing = true;
      if (options.heal) {
        cluster.switchFaults?.setSpec(NO_FAULTS);
        const probeNode = clientNodes.find((node) => node !== victimNode) ?? cluster.computeNodeIds.find((node) => node !== victimNode);
        if (probeNode === undefined) throw new RangeError('heal: no surviving compute node to probe from');
        const probe = cluster.clientPorts({ node: probeNode, client: spec.clients });
        healed = await healProbe(protocol, options.protocolOptions, probe, spec.locks, recorder, options.heal);
      }
      return survivors;
    })
    .finally(() => {
      finished = true;
    });

  let simEvents = 0;
  let cutOff = false;
  let endProblems: readonly string[] | undefined;
  const startNs = cluster.clock.nowNs();
  // A real-time timer: only for a caller that watches progress.
  const { onProgress } = options;
  const progress = onProgress
    ? setInterval(() => {
        const byTime = spec.durationMs ? (cluster.clock.nowNs() - startNs) / (spec.durationMs * NS_PER_MS) : 0;
        const byOps = spec.operations ? stats.acquires / spec.operations : 0;
        onProgress(Math.min(1, Math.max(byTime, byOps)));
      }, 200)
    : undefined;
  try {
    if (built.scheduler.kind === 'virtual') {
      // Safety stop: an acquire that never completes (a protocol bug, or a crashed holder without
      // timeouts) must not spin the simulator forever; liveness reports what was left pending.
      const horizonMs = (spec.durationMs ?? 60_000) + 10 * (spec.timeoutMs ?? 1_000) + (options.heal?.budgetMs ?? 0);
      const outcome = await built.scheduler.run({ untilNs: startNs + horizonMs * NS_PER_MS, stop: () => finished });
      simEvents = outcome.events;
      cutOff = !finished;
      const scheduler = built.scheduler;
      if (finished && options.endCheck) {
        if (victimDead && victimNode !== undefined) computeServices.delete(victimNode);
        const view: SwarmEndView = {
          computeServices,
          ...(cluster.switch && racks === 1 && clusterSpec.switchProgram ? { switchProgram: clusterSpec.switchProgram } : {}),
          settle: async (ns) => {
            simEvents += (await scheduler.run({ untilNs: cluster.clock.nowNs() + ns })).events;
          },
        };
        endProblems = await options.endCheck(view);
      }
    } else {
      const hardStopMs = (spec.durationMs ?? 60_000) + 10 * (spec.timeoutMs ?? 1_000);
      await Promise.race([run, new Promise((resolve) => setTimeout(resolve, hardStopMs).unref())]);
      cutOff = !finished;
    }
  } finally {
    if (progress) clearInterval(progress);
    control.close();
    for (const service of [...services, ...memoryServices.values()]) await service.stop();
  }
  const result = finished ? await run : undefined;
  const crashed = new Map(result?.crashed ?? []);
  if (failure) {
    for (const p of victimPorts) crashed.set(clientKey(p.self), failure.failedAtNs);
    for (const event of victimRecorder.events()) if (event.timeNs <= failure.failedAtNs) recorder.append(event);
  }
  const endNs = result?.endNs ?? cluster.clock.nowNs();
  const verbs = sumVerbs(cluster);
  // After the figures: the application's check reads the data through a client of its own.
  let application: InMemoryRunResult['application'];
  if (app && appLog && dataRegions && finished) {
    const reader = cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: spec.clients + 1 });
    let checked = false;
    const checking = checkAppRun(app, appLog, reader.verbs, dataRegions, spec.locks).finally(() => (checked = true));
    if (built.scheduler.kind === 'virtual') await built.scheduler.run({ stop: () => checked });
    application = { log: appLog, check: await checking };
  }
  // Lease safety: holds whose release reported LeaseExpiredError count only up to their grant.
  const leasesExpired = (stats.failuresByCode.get('LEASE_EXPIRED') ?? 0) > 0;
  // Holds whose table was lost (release TABLE_LOST) ended when the restarted table came up.
  const tableLost = (stats.failuresByCode.get('TABLE_LOST') ?? 0) > 0;
  let events = tableLost ? clipLostTableHolds([...recorder.events()], memoryRestarted?.restartedAtNs) : undefined;
  if (leasesExpired) events = clipExpiredLeases(events ?? [...recorder.events()], 0);
  const verdict = checkHistory(events ?? recorder, { failedClients: crashed });
  options.onProgress?.(1);
  // The percentiles walk every bucket of the latency histograms (a fifth of a swarm seed's CPU):
  // computed when first read, which a swarm seed never does.
  let summary: RunSummary | undefined;
  return {
    substrate: options.substrate,
    protocol: protocol.id,
    get summary(): RunSummary {
      return (summary ??= summarize(stats, endNs - startNs, verbs));
    },
    verdict,
    history: recorder,
    digest: historyDigest(recorder),
    verbs,
    accounting,
    nicCounters: cluster.nicCounters(),
    crashed,
    simEvents,
    wallMs: performance.now() - wallStart,
    ...(cpuStart ? { cpuMs: cpuMsSince(cpuStart) } : {}),
    cutOff,
    ...(failure ? { nodeFailure: failure } : {}),
    ...(memoryRestarted ? { memoryRestart: memoryRestarted } : {}),
    ...(flushed ? { flushedVerbs: flushed } : {}),
    ...(control.outcome() ? { control: control.outcome() } : {}),
    ...(lockManagerCpu ? { lockManagerCpu: cluster.lockManagerCpuStats() } : {}),
    ...(built.scheduler.kind === 'virtual' ? { nicLoads: cluster.nicLoads() } : {}),
    ...(model ? { costModel: model } : {}),
    ...(cluster.switch ? { switchDecisions: switchDecisionsOfRacks(cluster), switchPackets: switchPacketsPerRack(cluster) } : {}),
    ...(healed ? { heal: healed } : {}),
    ...(application ? { application } : {}),
    ...(lockWords ? { lockWords } : {}),
    ...(endProblems ? { endProblems } : {}),
  };
}

/** The compute nodes that host clients: those at `indices`, or all of them. */
function clientComputeNodes(computeNodes: readonly number[], indices: readonly number[] | undefined): readonly number[] {
  if (indices === undefined) return computeNodes;
  const nodes = indices.map((i) => {
    const node = computeNodes[i];
    if (node === undefined) throw new RangeError(`clientComputeNodes: no compute node ${i} (there are ${computeNodes.length})`);
    return node;
  });
  if (nodes.length === 0) throw new RangeError('clientComputeNodes: at least one compute node must host clients');
  return nodes;
}


function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function sumVerbs(cluster: InMemoryCluster): Record<string, number> {
  const total: Record<string, number> = {};
  for (const snapshot of Object.values(cluster.nicCounters())) {
    for (const [op, count] of Object.entries(snapshot.byOpcode as Record<string, number>)) total[op] = (total[op] ?? 0) + count;
  }
  return total;
}
