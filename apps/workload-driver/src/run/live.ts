import { create } from '@bufbuild/protobuf';
import { checkHistory, clipExpiredLeases, clipFencedHolds, clipLostTableHolds, failureImpact, historyDigest } from '@lockfabric/check';
import type { FailureImpact, HistoryEvent, Verdict } from '@lockfabric/check';
import { MUTANT_KEEP_OLD_RUN_VERBS_OPTION, MUTANT_LOCAL_VERBS_OPTION, MemoryQueuePair, SKIP_RELEASE_OPTION, SwitchControlClient, announceLockTable, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { protocolById, switchProgramKind } from '@lockfabric/lock-catalog';
import { switchQueueInstaller } from '@lockfabric/lock-catalog-control';
import { RUN_EPOCH_OPTION } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError, FabricAccessError } from '@lockfabric/ports';
import type { WorkRequest } from '@lockfabric/ports';
import { RunRequestSchema } from '@lockfabric/wire';
import type { RunResult } from '@lockfabric/wire';
import { RealClock } from '@lockfabric/realtime';
import { RunStats, VerbAccounting, mergePhaseTimingFromWire, runSpecToWire, summarize } from '@lockfabric/workloads';
import type { RunSummary, WorkloadSpec } from '@lockfabric/workloads';
import type { ClusterState, ProcessRecord } from '../cluster/local-cluster.js';
import { watchFailureNotices } from './failure-notices.js';
import type { DeclaredDead } from './failure-notices.js';
import { preRunTrace } from './pre-run-trace.js';
import { DEFAULT_STRAGGLER_GRACE_MS, startOnNodes } from './node-start.js';
import type { FailedNode, NodeRunPlan } from './node-start.js';
import { addressOf } from './remote-cluster.js';
import { findDownNodes, survivingComputeNodes } from './reachability.js';
import type { NodeDownAtStart, ReachOptions } from './reachability.js';
import { ADMISSION_TIMEOUT_MS, awaitSwitchAdmission } from './switch-admission.js';
import { SWITCH_GRANT_DECISIONS } from './switch-decisions.js';
import { checkAppLive, loadAppData } from './app-live.js';
import { iopsCapOf, memoryNicVerbs, nicFigures } from './memory-nic.js';
import type { AppCheck, AppRunLog } from '@lockfabric/workloads';
import { liveOptionProblems } from './live-defaults.js';

export { LIVE_PROTOCOL_DEFAULTS, liveOptions } from './live-defaults.js';
export { PRE_RUN_TRACE_SAMPLES, preRunTrace } from './pre-run-trace.js';
export { DEFAULT_PREPARE_TIMEOUT_MS, NodePrepareError } from './node-start.js';

export interface LiveRunOptions {
  readonly state: ClusterState;
  readonly protocol: string;
  readonly protocolOptions?: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly recordHistory?: boolean;
  readonly onProgress?: (fraction: number) => void;
  /**
   * Fault runs (the CLI's default): a compute node whose run stream fails (killed, cut off, silent
   * past the straggler grace) is listed in `failedNodes` instead of failing the whole run. The
   * history it streamed until then is kept; its clients count as failed from its last delivered
   * event, and their unfinished operations as unknown.
   */
  readonly tolerateNodeFailures?: boolean;
  /** With `tolerateNodeFailures`: see StartOnNodesOptions.stragglerGraceMs. */
  readonly stragglerGraceMs?: number;
  /**
   * Start barrier (default true): every compute node is prepared — its previous run's node service
   * stopped, this run's installed — before any node is told to run, so no client of this run can
   * be answered by a node service of the previous one. `false` starts every node with a one-phase
   * Run, as drivers did before the barrier; it exists so tests can show what the barrier prevents.
   */
  readonly startBarrier?: boolean;
  /** How long one node may take to answer Prepare (default DEFAULT_PREPARE_TIMEOUT_MS). */
  readonly prepareTimeoutMs?: number;
  /** With a switch and a coordinator: how long to wait for the switch to be opened to stamped packets (default ADMISSION_TIMEOUT_MS). */
  readonly admissionTimeoutMs?: number;
  /**
   * Awaited before the Run of compute node `node` is sent (with the barrier: after every node was
   * prepared). Tests use it to start nodes late; `opsDone` reads each node's last reported progress.
   */
  readonly beforeNodeStart?: (node: number, progress: { opsDone(node: number): number }) => Promise<void>;
  /**
   * Clients run on the memory node, beside its lock table (ALock's local cohort); the rest on the
   * compute nodes. Needs one memory node that hosts clients and a verbs protocol without a
   * compute-node service (see colocationProblems).
   */
  readonly colocatedClients?: number;
  /** A client skips a release with this probability and carries on (micro and dynamic workloads). */
  readonly skipReleaseProbability?: number;
  /** Test-only: the memory node's clients reach its table with verbs (MUTANT_LOCAL_VERBS_OPTION). */
  readonly mutantLocalVerbs?: boolean;
  /** Test-only: compute nodes leave the previous run's clients' verbs open (MUTANT_KEEP_OLD_RUN_VERBS_OPTION). */
  readonly mutantKeepOldRunVerbs?: boolean;
  /** How nodes are found down before the run (see findDownNodes); tests shorten or fake it. */
  readonly reach?: ReachOptions;
}

/** A compute node down when the run started: not run, its share of the clients not started. */
export interface ComputeDownAtStart extends NodeDownAtStart {
  readonly clients: number;
}

/** What one group of clients did, with its own latency and verbs: local (on the memory node) or remote. */
export interface PlacementFigures {
  readonly clients: number;
  readonly acquires: number;
  readonly releases: number;
  /** Verbs these clients issued (all phases), by phase and opcode as VerbAccounting keys them. */
  readonly verbs: Readonly<Record<string, number>>;
  readonly verbsPerAcquire: number;
  readonly verbsPerRelease: number;
  readonly acquireP50Us: number;
  readonly acquireMeanUs: number;
}

export interface LiveRunResult {
  readonly substrate: 'live';
  readonly protocol: string;
  readonly summary: RunSummary;
  readonly verdict: Verdict | undefined;
  readonly history: readonly HistoryEvent[];
  readonly digest: string | undefined;
  readonly verbs: Readonly<Record<string, number>>;
  readonly accounting: VerbAccounting;
  readonly computeNodes: number;
  /** Compute nodes whose run failed, with the error (only with `tolerateNodeFailures`). */
  readonly failedNodes: readonly FailedNode[];
  /** Per compute node that failed mid-run: what its failure did to the run (see NodeFailureReport). */
  readonly nodeFailures: readonly NodeFailureReport[];
  /**
   * Compute nodes of the run the coordinator declared dead during it (paused, cut off, killed).
   * Their holds whose release was refused as fenced end at the declaration for the checker
   * (clipFencedHolds), and their clients count as failed from then on.
   */
  readonly declaredDead: readonly DeclaredDead[];
  /** Compute nodes that do not implement Prepare (older versions): they ran outside the start barrier. */
  readonly unpreparedNodes: readonly number[];
  /** Compute nodes found down before the run (with `tolerateNodeFailures`): left out, their clients not started. */
  readonly downAtStart: readonly ComputeDownAtStart[];
  /** Switch-family protocols on a cluster with a switch-dataplane: what the switch did. */
  readonly switch?: LiveSwitchReport;
  /** Application runs: the compute nodes' merged log and the application's check on the memory nodes. */
  readonly application?: { readonly log: AppRunLog; readonly check: AppCheck };
  /**
   * Verbs each memory node's NIC served during the run (from its /metrics), by process name, and
   * for nodes started with an IOPS cap their use of it (0…1, DSLR Fig. 19).
   */
  readonly memoryNic?: { readonly verbs: Readonly<Record<string, number>>; readonly utilisation: Readonly<Record<string, number>> };
  /** With colocated clients: the figures of the clients on the memory node and of those on compute nodes. */
  readonly placement?: { readonly local: PlacementFigures; readonly remote: PlacementFigures };
}

/** One compute node that failed mid-run, as the report gives it. */
export interface NodeFailureReport {
  readonly node: number;
  readonly name: string;
  readonly error: string;
  /** When the driver saw its run stream break (the histories' time base). */
  readonly failedAtNs: number;
  /** History events received from it, and the time of the last one: what came after it was lost. */
  readonly historyEvents: number;
  readonly lastEventNs?: number;
  /** Acquires it last reported done. */
  readonly opsReported: number;
  readonly impact: FailureImpact;
}

/** The switch's side of a live run (read over SwitchControlService). */
export interface LiveSwitchReport {
  readonly program: string;
  /** NetLock: hot-lock queues installed from the profiled pre-run trace. */
  readonly hotLocks: number;
  readonly queueSlots: number;
  /** Packets by the program's decision during the run (the switch is reset before it). */
  readonly decisions: Readonly<Record<string, number>>;
  /** Grants the switch decided itself (NetLock queue grants, FissLock decider grants). */
  readonly switchGrants: number;
  /** switchGrants ÷ acquires (0 when nothing was acquired). */
  readonly switchGrantShare: number;
  /** Several racks (FissLock §5.4): each rack's switch grants, in rack order; `decisions` adds every rack's up. */
  readonly switchGrantsByRack?: readonly number[];
}

export { SWITCH_GRANT_DECISIONS } from './switch-decisions.js';

const ZERO_CHUNK_BYTES = 64 * 1024;

/** Runs a workload across the compute nodes of a live cluster and checks the merged history. */
export async function runLive(options: LiveRunOptions): Promise<LiveRunResult> {
  const protocol = protocolById(options.protocol);
  const { spec, state } = options;
  const allComputes = state.processes.filter((p) => p.role === 'compute');
  const memories = state.processes.filter((p) => p.role === 'memory');
  // --racks against a cluster started with another count (its compute nodes would refuse the run one by one)
  const askedRacks = options.protocolOptions?.['racks'];
  const clusterRacks = state.racks ?? 1;
  if (askedRacks !== undefined && state.processes.some((p) => p.role === 'switch') && String(askedRacks) !== String(clusterRacks)) {
    throw new ConfigError([`--racks ${String(askedRacks)}: the cluster has ${clusterRacks} rack${clusterRacks === 1 ? '' : 's'}; start it with \`cluster up --switch-program fisslock --racks ${String(askedRacks)}\` or drop --racks`]);
  }
  if (allComputes.length === 0 || memories.length === 0) throw new ConfigError(['the live cluster needs at least one memory node and one compute node']);
  const fixedOptions = liveOptionProblems(protocol.id, options.protocolOptions);
  if (fixedOptions.length > 0) throw new ConfigError(fixedOptions);
  const colocated = options.colocatedClients ?? 0;
  const colocation = colocationProblems(protocol, memories, colocated, spec.clients);
  if (colocation.length > 0) throw new ConfigError(colocation);
  // Before any connection: a dead node refuses at once, a paused one costs the probe's timeout, not the run.
  const down = await findDownNodes([...memories, ...allComputes], options.reach);
  const computes = survivingComputeNodes(allComputes, down, options.tolerateNodeFailures ?? false);
  await zeroLockMemory(memories, computes, spec.locks, protocol.entryBytes, colocated > 0);
  if (spec.application) await loadAppData(memories, spec.application, spec.locks);
  if (state.natsUrl) await announceTable(state, protocol.id, spec.locks);
  // every rack's switch (one unless the cluster was started with --racks): each is reset and read
  const switchRecords = protocol.fabric === 'switch' ? state.processes.filter((p) => p.role === 'switch' && p.grpc !== undefined) : [];
  const switchControls = switchRecords.map((r) => new SwitchControlClient(addressOf(r, r.grpc as number)));
  const switchControl = switchControls[0];
  try {
    let setup: Awaited<ReturnType<typeof prepareSwitch>> | undefined;
    for (const control of switchControls) setup ??= await prepareSwitch(control, protocol, spec, options.protocolOptions);
    for (const control of switchControls.slice(1)) await prepareSwitch(control, protocol, spec, options.protocolOptions);
    // With a coordinator, compute nodes stamp switch packets from its first view on, and the switch drops
    // stamped packets until the coordinator opens it: a run started in between loses its first
    // packets (a lost NetLock RELEASE holds its lock for good).
    if (switchControl && state.processes.some((p) => p.role === 'coordinator')) for (const control of switchControls) await awaitSwitchAdmission(control, options.admissionTimeoutMs ?? ADMISSION_TIMEOUT_MS);
    // Read after the tables were zeroed, so the figures count the run's verbs only. Not awaited
    // before the start: the run's first verb reaches a memory node only after every compute node
    // has prepared (and described it), long after this one request; the start is not delayed.
    const nicBeforeRead = memoryNicVerbs(memories);
    const ranOnNodes = await runOnNodes(options, protocol, allComputes, memories, down);
    const nicBefore = await nicBeforeRead;
    const caps = Object.fromEntries(memories.flatMap((m) => (iopsCapOf(m) ? [[m.name, iopsCapOf(m)!]] : [])));
    const ran = { ...ranOnNodes, memoryNic: nicFigures(nicBefore, await memoryNicVerbs(memories), ranOnNodes.summary.elapsedNs, caps) };
    const result = spec.application ? { ...ran, application: await checkAppLive(memories, spec.application, ran.applicationLogs ?? [], spec.locks) } : ran;
    if (!switchControl || !setup) return result;
    // The switch may be the fault: a run that survived it still reports, without the switch's side.
    const described = await Promise.all(switchControls.map((control) => control.describe().catch(() => undefined)));
    if (described.some((d) => d === undefined)) return result;
    const decisionsByRack = described.map((d) => Object.fromEntries(Object.entries(d!.decisions).map(([k, n]) => [k, Number(n)])));
    const decisions: Record<string, number> = {};
    for (const byName of decisionsByRack) for (const [k, n] of Object.entries(byName)) decisions[k] = (decisions[k] ?? 0) + n;
    const grantsOf = (byName: Record<string, number>) => SWITCH_GRANT_DECISIONS.reduce((sum, d) => sum + (byName[d] ?? 0), 0);
    const switchGrants = grantsOf(decisions);
    const acquires = result.summary.acquires;
    const byRack = switchControls.length > 1 ? { switchGrantsByRack: decisionsByRack.map(grantsOf) } : {};
    return { ...result, switch: { ...setup, decisions, switchGrants, switchGrantShare: acquires > 0 ? Math.min(1, switchGrants / acquires) : 0, ...byRack } };
  } finally {
    for (const control of switchControls) control.close();
  }
}

/**
 * Before a switch-family run: registers back to their initial values (a new run's machines restart
 * their sequence numbers and hold no agents), and for a program that plans queues (its kind's
 * `planQueues`) the queues of a profiled pre-run trace, sized to the program's arrays.
 */
async function prepareSwitch(control: SwitchControlClient, protocol: ReturnType<typeof protocolById>, spec: WorkloadSpec, protocolOptions: ProtocolOptions | undefined): Promise<{ program: string; hotLocks: number; queueSlots: number }> {
  const wanted = protocol.switchProgram;
  const description = await control.describe();
  if (wanted !== undefined && description.program !== wanted) {
    throw new ConfigError([`the switch runs program '${description.program}'; this protocol needs '${wanted}' (start the cluster with --switch-program=${wanted})`]);
  }
  protocol.checkRunningSwitch?.(description, spec.locks, protocolOptions);
  await control.reset();
  const planQueues = switchProgramKind(description.program)?.planQueues;
  const install = switchQueueInstaller(description.program);
  if (planQueues === undefined || install === undefined) return { program: description.program, hotLocks: 0, queueSlots: 0 };
  const lengthOf = (name: string) => description.arrays.find((a) => a.name === name)?.length ?? 0;
  const queues = planQueues(preRunTrace(spec), lengthOf);
  const installed = await install(control, queues);
  return { program: description.program, hotLocks: installed.hotLocks, queueSlots: installed.slots };
}

async function runOnNodes(
  options: LiveRunOptions,
  protocol: ReturnType<typeof protocolById>,
  computes: readonly ProcessRecord[],
  memories: readonly ProcessRecord[],
  down: readonly NodeDownAtStart[],
): Promise<LiveRunResult & { applicationLogs?: readonly string[] }> {
  const { spec } = options;
  const isDown = (node: number) => down.some((d) => d.role === 'compute' && d.node === node);

  const peers: Record<number, string> = {};
  for (const m of memories) peers[m.node] = addressOf(m, m.grpc);
  for (const c of computes) if (!isDown(c.node)) peers[c.node] = addressOf(c, c.memoryGrpc);
  // Colocated clients run on the (single) memory node, which serves them like a compute node.
  const colocated = options.colocatedClients ?? 0;
  const host = memories[0]!;
  const hosts: ProcessRecord[] = colocated > 0 ? [...computes, { ...host, grpc: host.clientsGrpc! }] : [...computes];
  const shares = colocated > 0 ? [...split(spec.clients - colocated, computes.length), colocated] : split(spec.clients, computes.length);
  const opShares = spec.operations !== undefined ? splitProportional(spec.operations, shares) : undefined;
  const progress = new Map<number, number>();
  const report = () => {
    if (!options.onProgress) return;
    const done = [...progress.values()].reduce((a, b) => a + b, 0);
    options.onProgress(spec.operations ? Math.min(1, done / spec.operations) : 0);
  };
  const started = Date.now();
  // a server that outlives runs (the memory node's, for rpc and traditional) tells them apart by it
  const runEpoch: Record<string, string> = protocol.options[RUN_EPOCH_OPTION] !== undefined ? { [RUN_EPOCH_OPTION]: String(nextRunEpoch(started)) } : {};
  const barrier = options.startBarrier ?? true;
  // A node down at the start keeps its share (and the others their seeds): its clients are not started.
  const downAtStart: ComputeDownAtStart[] = down.flatMap((d) => (d.role === 'compute' ? [{ ...d, clients: shares[hosts.findIndex((h) => h.role === 'compute' && h.node === d.node)] ?? 0 }] : []));
  // With the barrier, a node without clients still runs: its node service (a lock home, agents) is this run's.
  const plans: NodeRunPlan[] = hosts.flatMap((compute, k) => {
    if (compute.role === 'compute' && isDown(compute.node)) return [];
    if ((shares[k] ?? 0) === 0 && !barrier) return [];
    const nodeSpec: WorkloadSpec = { ...spec, clients: shares[k]!, ...(opShares ? { operations: opShares[k]! } : {}), seed: spec.seed + k * 7919 };
    const hostOptions: Record<string, string> = options.mutantLocalVerbs && compute.role === 'memory' ? { [MUTANT_LOCAL_VERBS_OPTION]: 'true' } : {};
    if (options.skipReleaseProbability) hostOptions[SKIP_RELEASE_OPTION] = String(options.skipReleaseProbability);
    if (options.mutantKeepOldRunVerbs) hostOptions[MUTANT_KEEP_OLD_RUN_VERBS_OPTION] = 'true';
    const request = create(RunRequestSchema, {
      runId: `run-${started}`,
      spec: runSpecToWire({ protocol: protocol.id, workload: nodeSpec, options: { ...stringify(options.protocolOptions), ...runEpoch, ...hostOptions } }),
      recordHistory: options.recordHistory ?? true,
      peers,
    });
    return [{ compute, request }];
  });
  const ticker = spec.durationMs && options.onProgress ? setInterval(() => options.onProgress?.(Math.min(1, (Date.now() - started) / spec.durationMs!)), 200) : undefined;
  const opsDone = (node: number) => progress.get(node) ?? 0;
  const clock = new RealClock();
  const watch = await watchFailureNotices(options.state.natsUrl, options.state.cluster);
  const { outcomes, failedNodes, unpreparedNodes } = await startOnNodes(plans, {
    barrier,
    tolerateNodeFailures: options.tolerateNodeFailures ?? false,
    nowNs: () => clock.nowNs(),
    ...(options.stragglerGraceMs !== undefined ? { stragglerGraceMs: options.stragglerGraceMs } : {}),
    ...(spec.durationMs !== undefined ? { runDeadlineMs: spec.durationMs + (options.stragglerGraceMs ?? DEFAULT_STRAGGLER_GRACE_MS) } : {}),
    ...(options.prepareTimeoutMs !== undefined ? { prepareTimeoutMs: options.prepareTimeoutMs } : {}),
    ...(options.beforeNodeStart ? { beforeStart: (node: number) => options.beforeNodeStart!(node, { opsDone }) } : {}),
    onOps: (node, ops) => {
      progress.set(node, ops);
      report();
    },
  }).finally(async () => {
    if (ticker) clearInterval(ticker);
    await watch.close();
  });
  const results = outcomes.map((o) => o.result).filter((r): r is RunResult => r !== undefined);
  const stats = RunStats.mergeAll(
    results.map((r) =>
      RunStats.fromWire({
        acquires: Number(r.acquires),
        releases: Number(r.releases),
        acquireFailures: Number(r.acquireFailures),
        releaseFailures: Number(r.releaseFailures),
        failuresByCode: Object.fromEntries(Object.entries(r.failuresByCode).map(([k, v]) => [k, Number(v)])),
        acquireLatencyNs: r.acquireLatencyHistogram,
        releaseLatencyNs: r.releaseLatencyHistogram,
      }),
    ),
  );
  const accounting = new VerbAccounting();
  for (const r of results) {
    accounting.merge(VerbAccounting.fromFlat(Object.fromEntries(Object.entries(r.verbCounts).map(([k, n]) => [k, Number(n)]))).counts);
    mergePhaseTimingFromWire(accounting.phases, r.phaseTotals, r.resets);
  }
  const verbs: Record<string, number> = {};
  for (const phase of Object.values(accounting.counts)) for (const [op, n] of Object.entries(phase)) verbs[op] = (verbs[op] ?? 0) + n;
  const elapsedNs = Math.max(0, ...results.map((r) => Number(r.elapsedNs)));
  const history = outcomes.flatMap((o) => o.history);
  const recorded = options.recordHistory ?? true;
  // A killed node's clients are judged by the history it delivered: its holds end at its last
  // delivered event. A release it recorded afterwards died with it, so a later end would make the
  // checker claim overlaps the history cannot prove; the report says how long that stretch was.
  const failedClients = new Map<string, number>();
  const nodeFailures: NodeFailureReport[] = [];
  plans.forEach((plan, k) => {
    const failure = outcomes[k]?.failure;
    if (!failure) return;
    const clients = plan.request.spec?.clients ?? 0;
    const historyEndNs = failure.lastEventNs ?? failure.observedAtNs;
    for (let i = 0; i < clients; i++) failedClients.set(`${failure.node}/${i}`, historyEndNs);
    const prefix = `${failure.node}/`;
    nodeFailures.push({
      node: failure.node,
      name: failure.name,
      error: failure.error,
      failedAtNs: failure.observedAtNs,
      historyEvents: failure.historyEvents,
      ...(failure.lastEventNs !== undefined ? { lastEventNs: failure.lastEventNs } : {}),
      opsReported: failure.opsReported,
      impact: failureImpact(history, (client) => client.startsWith(prefix), failure.observedAtNs, historyEndNs),
    });
  });
  // Nodes declared dead mid-run (a pause or a cut outlasting detection): fenced from then on.
  const runNodes = new Set(plans.map((p) => p.compute.node));
  const declaredDead = watch.notices.filter((n) => n.role === 'compute' && runNodes.has(n.node));
  // A hold whose memory node restarted under it (release failed TABLE_LOST) counts up to its grant:
  // the driver does not know when the table was lost, and the history proves no more.
  let checked = recorded ? clipLostTableHolds(clipExpiredLeases(history, 0)) : [];
  for (const dead of declaredDead) {
    checked = clipFencedHolds(checked, dead.node, dead.atNs);
    const plan = plans.find((p) => p.compute.node === dead.node);
    for (let i = 0; i < (plan?.request.spec?.clients ?? 0); i++) {
      const key = `${dead.node}/${i}`;
      failedClients.set(key, Math.min(failedClients.get(key) ?? Infinity, dead.atNs));
    }
  }
  options.onProgress?.(1);
  return {
    substrate: 'live',
    protocol: protocol.id,
    summary: summarize(stats, elapsedNs, verbs),
    // Lease safety: a hold whose release reported LeaseExpiredError counts only up to its grant.
    verdict: recorded ? checkHistory(checked, { failedClients }) : undefined,
    history,
    digest: recorded ? historyDigest(history) : undefined,
    verbs,
    accounting,
    computeNodes: computes.length,
    failedNodes,
    nodeFailures,
    declaredDead,
    unpreparedNodes,
    downAtStart,
    ...(spec.application ? { applicationLogs: results.map((r) => r.applicationLog) } : {}),
    ...(colocated > 0 ? { placement: placementFigures(plans, outcomes.map((o) => o.result)) } : {}),
  };
}

/** Why colocated clients cannot run on this cluster with this protocol (empty: they can). */
export function colocationProblems(protocol: ReturnType<typeof protocolById>, memories: readonly ProcessRecord[], colocated: number, clients: number): string[] {
  if (colocated === 0) return [];
  const problems: string[] = [];
  if (colocated > clients) problems.push(`--colocated-clients: ${colocated} is more than --clients ${clients}`);
  if (protocol.fabric !== 'verbs' || protocol.services?.compute) problems.push(`--colocated-clients: ${protocol.id} needs a switch or a compute-node service; on live, clients run on a memory node only for verbs protocols without one`);
  if (memories.length !== 1) problems.push(`--colocated-clients: the cluster has ${memories.length} memory nodes; on live, colocated clients need exactly one (the table they sit beside)`);
  const host = memories[0];
  if (host && host.clientsGrpc === undefined) problems.push(`--colocated-clients: memory node ${host.node} hosts no clients (start it with --memory.clients-grpc-port; \`lockfabric cluster up\` does)`);
  return problems;
}

/** Figures of the memory node's clients (local) beside those of the compute nodes' (remote). */
function placementFigures(plans: readonly NodeRunPlan[], results: readonly (RunResult | undefined)[]): { local: PlacementFigures; remote: PlacementFigures } {
  const group = (local: boolean): PlacementFigures => {
    const picked = plans.flatMap((plan, k) => ((plan.compute.role === 'memory') === local ? [{ plan, result: results[k] }] : []));
    const clients = picked.reduce((sum, p) => sum + (p.plan.request.spec?.clients ?? 0), 0);
    const done = picked.flatMap((p) => (p.result ? [p.result] : []));
    const stats = RunStats.mergeAll(done.map((r) => RunStats.fromWire({ acquires: Number(r.acquires), releases: Number(r.releases), acquireFailures: Number(r.acquireFailures), releaseFailures: Number(r.releaseFailures), failuresByCode: {}, acquireLatencyNs: r.acquireLatencyHistogram, releaseLatencyNs: r.releaseLatencyHistogram })));
    const verbs: Record<string, number> = {};
    for (const r of done) for (const [key, n] of Object.entries(r.verbCounts)) verbs[key] = (verbs[key] ?? 0) + Number(n);
    const sumOf = (phase: string) => Object.entries(verbs).reduce((sum, [key, n]) => (key.startsWith(`${phase}.`) ? sum + n : sum), 0);
    const summary = summarize(stats, 0);
    return {
      clients,
      acquires: summary.acquires,
      releases: summary.releases,
      verbs,
      verbsPerAcquire: summary.acquires > 0 ? sumOf('acquire') / summary.acquires : 0,
      verbsPerRelease: summary.releases > 0 ? sumOf('release') / summary.releases : 0,
      acquireP50Us: summary.latencyUs.p50,
      acquireMeanUs: summary.latencyUs.mean,
    };
  };
  return { local: group(true), remote: group(false) };
}

/** Tells the memory nodes which protocol the freshly zeroed table serves, so they can free a dead holder's words. */
async function announceTable(state: ClusterState, protocol: string, lockCount: number): Promise<void> {
  const nc = await connectNats({ servers: state.natsUrl, name: 'lockfabric-driver', logger: silentLogger });
  try {
    await announceLockTable(nc, createSubjects(state.cluster), protocol, lockCount);
  } finally {
    await nc.close();
  }
}

/** Zeroes the lock table (and compute nodes' descriptor slots) so every run starts from free locks. */
async function zeroLockMemory(memories: readonly ProcessRecord[], computes: readonly ProcessRecord[], lockCount: number, entryBytes: number, memoryDescriptors = false): Promise<void> {
  const perNode = Math.ceil(lockCount / memories.length) * entryBytes;
  // Region 1 of a memory node holds the descriptor slots of the clients it hosts.
  const targets = [
    ...memories.map((m) => ({ address: addressOf(m, m.grpc), bytes: perNode, region: 0 })),
    ...(memoryDescriptors ? memories.map((m) => ({ address: addressOf(m, m.grpc), bytes: -1, region: 1 })) : []),
    ...computes.map((c) => ({ address: addressOf(c, c.memoryGrpc), bytes: -1, region: 0 })),
  ];
  await Promise.all(
    targets.map(async ({ address, bytes, region: index }) => {
      const qp = await MemoryQueuePair.connect(address, 65_000, { logger: silentLogger });
      try {
        const description = await qp.describe();
        const region = description.regions.find((r) => r.region === index);
        if (!region) return;
        const total = bytes < 0 ? region.sizeBytes : bytes;
        if (total > region.sizeBytes) throw new ConfigError([`memory node ${description.node} holds ${region.sizeBytes} bytes of lock table; the run needs ${total}`]);
        const batch: WorkRequest[] = [];
        for (let offset = 0; offset < total; offset += ZERO_CHUNK_BYTES) {
          const length = Math.min(ZERO_CHUNK_BYTES, total - offset);
          batch.push({ op: 'write', addr: { node: description.node, region: index, rkey: region.rkey, offset }, data: new Uint8Array(length) });
        }
        // 16 × 64 KiB per doorbell keeps each gRPC frame under its 4 MiB default limit.
        for (let i = 0; i < batch.length; i += 16) {
          const completions = await qp.post(batch.slice(i, i + 16));
          const bad = completions.find((c) => c.status !== 'ok');
          if (bad) throw new FabricAccessError(bad.status, `zeroing ${address}: ${bad.detail ?? ''}`);
        }
      } finally {
        qp.close();
      }
    }),
  );
}

let lastRunEpoch = 0;

/**
 * The epoch of a run whose protocol stamps one (RUN_EPOCH_OPTION): wall-clock ms, so a later
 * driver's runs on this cluster come after this one's, and above every earlier run of this process.
 */
function nextRunEpoch(nowMs: number): number {
  lastRunEpoch = Math.max(nowMs, lastRunEpoch + 1);
  return lastRunEpoch;
}

function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

function splitProportional(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const out = weights.map((w) => Math.floor((total * w) / sum));
  let rest = total - out.reduce((a, b) => a + b, 0);
  for (let i = 0; rest > 0; i = (i + 1) % out.length) {
    if ((weights[i] ?? 0) > 0) {
      out[i]!++;
      rest--;
    }
  }
  return out;
}

function stringify(options: ProtocolOptions | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(options ?? {}).map(([k, v]) => [k, String(v)]));
}

