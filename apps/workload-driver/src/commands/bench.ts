import { processNatsTlsOn, processTlsOn } from '@lockfabric/live';
import { writeHistoryJsonl } from '@lockfabric/check';
import { DEFAULT_PROTOCOL_ID, availableProtocols, protocolById, switchProgramKind } from '@lockfabric/lock-catalog';
import { renamedOptionProblem } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { WORKLOAD_FLAGS, parseCommandArgs, readWorkload } from '../cli/args.js';
import type { FlagReader } from '../cli/args.js';
import { writeReport } from '@lockfabric/report';
import type { BenchRunReport } from '@lockfabric/report';
import { familyOf } from '../report/family.js';
import type { SwitchSettings } from '../cluster/local-cluster.js';
import { isAlive, readClusterState } from '../cluster/local-cluster.js';
import { runLive } from '../run/live.js';
import { liveOptionProblems, substrateOptions } from '../run/live-defaults.js';
import { DEFAULT_LIVE_WARMUP_OPS, warmUpLive } from '../run/warm-up.js';
import { floorProbeSpec, floorReport, measureClusterFloor, measureRoundTrips, withProcessorTime } from '../run/transport-floor.js';
import { acquireTracedCluster, readTraceSettings } from '../run/traced-cluster.js';
import { describeFloorByTracing } from '../report/floor-by-tracing.js';
import type { TraceSetting } from '../run/otlp-sink.js';
import type { FloorReport } from '../run/transport-floor.js';
import { discoverRemoteCluster } from '../run/remote-cluster.js';
import { benchReport, describeReport, summarizeNodeFailures, verdictWord } from '../report/bench-report.js';
import type { LiveRunResult } from '../run/live.js';
import type { BenchReport } from '../report/bench-report.js';
import { ProgressBar } from '../report/progress.js';
import { runJobs } from '../workers/pool.js';
import { benchInMemory, benchTimeline } from './bench-in-memory.js';
import type { InMemoryBenchJob } from './bench-in-memory.js';
import { TXN_FLAGS, readTxnWorkload, txnReport } from '../run/txn-bench.js';
import { APP_FLAGS, isAppWorkload, readAppWorkload } from '../run/app-bench.js';
import { DYNAMIC_FLAGS, readDynamicWorkload } from '../run/dynamic-bench.js';
import { appReport } from '@lockfabric/workloads';
import { REDLOCK, checkBalances, populateAccounts, runRedLock, smallBankProblems, smallBankRedis, withRedis } from '../run/smallbank-bench.js';
import type { SmallBankWorkloadSpec } from '@lockfabric/workloads';
import { COST_KNOB_FLAGS, COST_MODEL_FLAGS, readCostModel } from '../cli/cost-model.js';
import type { CostModel } from '@lockfabric/fabric';
import { CS_DATA_REGION_BYTES } from '@lockfabric/workloads';
import { DEFAULT_CLUSTER_DIR, acquireLiveCluster, output, withoutDownComputeNodes } from './context.js';
import type { Output } from './context.js';

import { benchHelpCommand } from './bench-help.js';
import { benchExitCode, nothingRan } from './bench-exit.js';

export { BENCH_HELP, workloadHelp } from './bench-help.js';

export async function benchCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('bench', argv, {
    ...WORKLOAD_FLAGS,
    ...TXN_FLAGS,
    ...APP_FLAGS,
    ...DYNAMIC_FLAGS,
    ...COST_MODEL_FLAGS,
    ...COST_KNOB_FLAGS,
    'cs-verbs': { type: 'string' },
    'cs-verb-size': { type: 'string' },
    substrate: { type: 'string' },
    history: { type: 'string' },
    'compute-nodes': { type: 'string' },
    'cluster-dir': { type: 'string' },
    'crash-probability': { type: 'string' },
    'skip-release-probability': { type: 'string' },
    'jitter-ns': { type: 'string' },
    'compute-nodes-at': { type: 'string' },
    'memory-nodes-at': { type: 'string' },
    'compute-memory-port': { type: 'string' },
    report: { type: 'string' },
    'floor-ops': { type: 'string' },
    'warmup-ops': { type: 'string' },
    'trace-ratio': { type: 'string' },
    'colocated-clients': { type: 'string' },
    'mutant-local-verbs': { type: 'boolean' },
    'tick-ms': { type: 'string' },
    insecure: { type: 'boolean' },
    workers: { type: 'string' },
  });
  if (values['help']) return benchHelpCommand(argv);
  const { spec: plainSpec, protocolOptions, reader } = readWorkload(values, { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 10_000 });
  const csVerbs = reader.number('cs-verbs', 0, { integer: true, min: 0 });
  const csVerbBytes = reader.optionalNumber('cs-verb-size', { integer: true, min: 1 });
  if (csVerbBytes !== undefined && csVerbs === 0) reader.problems.push('--cs-verb-size: give --cs-verbs N too');
  if (csVerbBytes !== undefined && csVerbBytes > CS_DATA_REGION_BYTES) reader.problems.push(`--cs-verb-size: at most ${CS_DATA_REGION_BYTES} bytes`);
  const microSpec = csVerbs > 0 ? { ...plainSpec, csVerbs, ...(csVerbBytes !== undefined ? { csVerbBytes } : {}) } : plainSpec;
  const substrate = reader.string('substrate', 'sim');
  if (!['sim', 'embedded', 'live'].includes(substrate)) reader.problems.push(`--substrate: expected sim, embedded or live, got ${JSON.stringify(substrate)}`);
  const computeNodes = reader.number('compute-nodes', 2, { integer: true, min: 1 });
  const crashProbability = reader.number('crash-probability', 0, { min: 0, max: 1 });
  const skipReleaseProbability = reader.number('skip-release-probability', 0, { min: 0, max: 1 });
  const jitterNs = reader.optionalNumber('jitter-ns', { min: 0 });
  const computeMemoryPort = reader.number('compute-memory-port', 50055, { integer: true, min: 1, max: 65535 });
  const floorOps = reader.number('floor-ops', substrate === 'live' ? 300 : 0, { integer: true, min: 0 });
  const warmUpOps = reader.number('warmup-ops', substrate === 'live' ? DEFAULT_LIVE_WARMUP_OPS : 0, { integer: true, min: 0 });
  if (warmUpOps > 0 && substrate !== 'live') reader.problems.push('--warmup-ops: only live runs warm their service processes up (sim and embedded have none)');
  const colocatedClients = reader.number('colocated-clients', 0, { integer: true, min: 0 });
  const tickFlagMs = reader.optionalNumber('tick-ms', { min: 0.001 });
  const mutantLocalVerbs = values['mutant-local-verbs'] === true;
  if (mutantLocalVerbs && (substrate !== 'live' || colocatedClients === 0)) reader.problems.push('--mutant-local-verbs: give --substrate live and --colocated-clients N');
  if (colocatedClients > microSpec.clients) reader.problems.push(`--colocated-clients: ${colocatedClients} is more than --clients ${microSpec.clients}`);
  if (floorOps > 0 && substrate !== 'live') reader.problems.push('--floor-ops: the transport floor is a live figure (sim and embedded have no transport)');
  const traceSettings = readTraceSettings(values, substrate, reader.problems);
  if (substrate === 'live' && crashProbability > 0) reader.problems.push('--crash-probability applies to sim and embedded; on live, use `lockfabric chaos`');
  // Application and dynamic workloads read their own flags; every other workload must not be given them.
  const ownFlags = isAppWorkload(values) || values['workload'] === 'dynamic';
  const { spec, tickMs: dynamicTickMs } = readDynamicWorkload(values, reader, readAppWorkload(values, reader, ownFlags ? microSpec : await readTxnWorkload(values, reader, microSpec, substrate)));
  // a dynamic workload always has a timeline (its tick defaults to a sixth of the hotspot's period)
  const tickMs = tickFlagMs ?? dynamicTickMs;
  if (spec.transactions && crashProbability > 0) reader.problems.push('--crash-probability applies to --workload micro');
  if (skipReleaseProbability > 0 && (spec.transactions || spec.application)) reader.problems.push('--skip-release-probability applies to --workload micro or dynamic');
  const protocols = readProtocolList(reader.string('protocol', DEFAULT_PROTOCOL_ID), reader.problems);
  if (colocatedClients > 0 && substrate === 'live') reader.problems.push(...liveColocationProblems(protocols));
  const costModel = readCostModel(values, reader, true);
  if (csVerbs > 0 && (spec.transactions || spec.application)) reader.problems.push('--cs-verbs applies to --workload micro or dynamic');
  // On live, --mn-iops caps the memory nodes' real NICs (a temporary cluster's; `cluster up --mn-iops`).
  if (substrate !== 'sim') for (const flag of ['cost-model', 'mn-iops', 'cn-latency-ns']) if (values[flag] !== undefined && !(flag === 'mn-iops' && substrate === 'live')) reader.problems.push(`--${flag}: a cost model is virtual time, sim only`);
  const historyFile = values['history'];
  const reportDir = values['report'];
  if (protocols.length > 1) reader.problems.push(...optionsNotShared(protocols, protocolOptions));
  reader.problems.push(...smallBankProblems(protocols, substrate, spec));
  if (protocols.includes(REDLOCK) && Object.keys(protocolOptions).length > 0) reader.problems.push('--opt: redlock takes no protocol options');
  if (substrate === 'live') for (const id of protocols) if (id !== REDLOCK) reader.problems.push(...liveOptionProblems(id, protocolOptions));
  if (protocols.length > 1 && typeof historyFile === 'string') reader.problems.push('--history: give one --protocol (a history file holds one run)');
  if ((traceSettings?.length ?? 0) > 1 && typeof historyFile === 'string') reader.problems.push('--history: give one --trace-ratio setting (a history file holds one run)');
  const workers = reader.number('workers', 1, { integer: true, min: 1, max: 64 });
  // Threads would share the cores real-time runs measure on; only virtual time is unaffected.
  if (workers > 1 && substrate !== 'sim') reader.problems.push('--workers: runs several simulations at once, so only with --substrate sim');
  reader.done();
  const out = output(values['json'] === true);
  const reports: BenchReport[] = [];
  const pooled = workers > 1 && protocols.length > 1;
  if (pooled) {
    // One simulation per protocol on the pool; reports come back in --protocol order.
    const jobs: InMemoryBenchJob[] = protocols.map((protocol) => ({ protocol, substrate: 'sim', spec, protocolOptions, computeNodes, crashProbability, skipReleaseProbability, jitterNs, colocatedClients, tickMs, costModel }));
    reports.push(...(await runJobs(jobs, workers, 'bench', async (job) => (await benchInMemory(job)).report)));
  }
  // --trace-ratio off,1%: each protocol once per setting, each on its own temporary cluster
  const runs = (pooled ? [] : protocols).flatMap((protocol) => (traceSettings ?? [undefined]).map((tracing) => ({ protocol, tracing })));
  for (const { protocol, tracing } of runs) {
    const { report: run, history } = await benchOne({ protocol, substrate, spec, protocolOptions, costModel, computeNodes, crashProbability, skipReleaseProbability, jitterNs, computeMemoryPort, floorOps, warmUpOps, colocatedClients, mutantLocalVerbs, tracing, values, reader, out });
    const report = tickMs === undefined ? run : { ...run, timeline: benchTimeline(history, tickMs) };
    reports.push(report);
    if (typeof historyFile === 'string') {
      await writeHistoryJsonl(history, historyFile);
      out.note(`history written to ${historyFile}`);
    }
  }
  const document: BenchRunReport = { kind: 'bench', version: 1, command: `lockfabric bench ${argv.join(' ')}`, results: reports.map((r) => ({ ...r, family: familyOf(r.protocol), verdict: verdictWord(r) })) };
  let reportHtml: { reportHtml: string } | undefined;
  if (typeof reportDir === 'string') {
    reportHtml = { reportHtml: (await writeReport(document, reportDir)).html };
    out.note(`report: ${reportHtml.reportHtml}`);
  }
  if (out.json) console.log(JSON.stringify({ ...(reports.length === 1 ? reports[0] : document), ...reportHtml }));
  else console.log([...reports.map(describeReport), ...((traceSettings?.length ?? 0) > 1 ? [describeFloorByTracing(reports)] : [])].join('\n\n'));
  for (const report of reports.filter(nothingRan)) out.note(`error: ${report.protocol}: no compute node ran the workload (see "did not start")`);
  return benchExitCode(reports);
}

/** Live colocated clients run on a memory node, which has no switch link and runs no compute-node service. */
function liveColocationProblems(protocols: readonly string[]): string[] {
  return availableProtocols()
    .filter((p) => protocols.includes(p.id) && (p.fabric !== 'verbs' || p.services?.compute !== undefined))
    .map((p) => `--colocated-clients: ${p.id} needs a switch or a compute-node service; on live, clients run on a memory node only for verbs protocols without one`);
}

/** `--protocol a,b,…`: known ids, each once; an unknown one is a listed problem. */
export function readProtocolList(value: string, problems: string[]): string[] {
  const ids = [...new Set(value.split(',').map((id) => id.trim()).filter((id) => id.length > 0))];
  // redlock is not a catalog protocol: it runs SmallBank over Redis (see smallbank-bench.ts).
  const known: readonly string[] = [...availableProtocols().map((p) => p.id), REDLOCK];
  if (ids.length === 0) problems.push('--protocol: expected a protocol id or a comma-separated list');
  for (const id of ids) if (!known.includes(id)) problems.push(`--protocol: unknown protocol ${JSON.stringify(id)}; protocol ids are ${known.join(', ')}`);
  return ids;
}

/** With several protocols every `--opt` goes to each, so each must know it; checked before any run starts. */
export function optionsNotShared(protocols: readonly string[], protocolOptions: ProtocolOptions): string[] {
  const byId = new Map(availableProtocols().map((p) => [p.id as string, p]));
  return Object.keys(protocolOptions).flatMap((name) => {
    const knows = (id: string, option: string): boolean => option in (byId.get(id)?.options ?? {});
    const lacking = protocols.filter((id) => byId.has(id) && !knows(id, name));
    if (lacking.length === 0) return [];
    const renamed = renamedOptionProblem('--opt', name, protocolOptions[name], (option) => lacking.every((id) => knows(id, option)));
    return [renamed ?? `--opt ${name}: not an option of ${lacking.join(', ')} (with several protocols every --opt applies to each)`];
  });
}

interface BenchOneInput {
  readonly protocol: string;
  readonly substrate: string;
  readonly spec: Awaited<ReturnType<typeof readTxnWorkload>>;
  readonly protocolOptions: ProtocolOptions;
  readonly costModel: CostModel;
  readonly computeNodes: number;
  readonly crashProbability: number;
  readonly skipReleaseProbability: number;
  readonly jitterNs: number | undefined;
  readonly computeMemoryPort: number;
  /** Live: uncontended probe operations after the run (0: none). */
  readonly floorOps: number;
  /** Live: untimed operations of the same workload before the run (0: none). */
  readonly warmUpOps: number;
  readonly tracing: TraceSetting | undefined;
  /** Clients placed on the memory node. */
  readonly colocatedClients: number;
  /** Test-only, live: the memory node's clients use verbs on its table. */
  readonly mutantLocalVerbs: boolean;
  readonly values: Record<string, unknown>;
  readonly reader: FlagReader;
  readonly out: Output;
}

/** One protocol's run on the chosen substrate, and its report. */
async function benchOne(input: BenchOneInput): Promise<{ report: BenchReport; history: Parameters<typeof writeHistoryJsonl>[0] }> {
  const { protocol, substrate, spec, protocolOptions, costModel, computeNodes, crashProbability, skipReleaseProbability, jitterNs, computeMemoryPort, floorOps, warmUpOps, colocatedClients, mutantLocalVerbs, tracing, values, reader, out } = input;
  const memoryIopsCap = substrate === 'live' ? reader.optionalNumber('mn-iops', { min: 1 }) : undefined;
  const bar = new ProgressBar(`${protocol} ${substrate}`, { enabled: !out.json });
  let report: BenchReport;
  let history;
  const smallbank = spec.transactions?.workload.kind === 'smallbank' ? (spec.transactions.workload as SmallBankWorkloadSpec) : undefined;
  if (substrate === 'live' && protocol === REDLOCK && smallbank) {
    // RedLock needs no compute nodes, only Redis: a running cluster's, when there is one.
    const running = readClusterState(reader.string('cluster-dir', DEFAULT_CLUSTER_DIR));
    const clusterRedis = running?.processes.some((p) => p.role === 'redis' && isAlive(p.pid)) ? running.redisUrl : undefined;
    const redis = await smallBankRedis(smallbank, clusterRedis, (line) => out.note(line));
    try {
      const runSpec = withRedis(spec, redis.url);
      await populateAccounts(redis.url, smallbank.accounts!);
      const result = await runRedLock(runSpec, redis.url, (f) => bar.update(f));
      bar.done();
      report = benchReport({ protocol: REDLOCK, substrate: 'live', summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: result.wallMs, digest: result.digest });
      report = { ...report, transactions: { ...txnReport(result.history, runSpec.transactions!, result.summary.elapsedNs), smallbank: await checkBalances(redis.url, runSpec.transactions!, result.history) } };
      return { report, history: result.history };
    } finally {
      await redis.stop();
    }
  }
  if (substrate === 'live') {
    const remoteAt = values['compute-nodes-at'];
    const cluster =
      typeof remoteAt === 'string'
        ? { state: await discoverRemoteCluster({ computeNodesAt: [remoteAt], memoryNodesAt: [reader.string('memory-nodes-at', '')], computeMemoryPort }), release: async () => undefined }
        : await acquireTracedCluster(tracing, (env) => acquireLiveCluster(reader.string('cluster-dir', DEFAULT_CLUSTER_DIR), out, { computeNodes, insecure: values['insecure'] === true, ...(memoryIopsCap ? { memoryIopsCap } : {}), ...switchProgramOf(protocol, protocolOptions), ...(env ? { env } : {}) }));
    if (memoryIopsCap && !('temporary' in cluster && cluster.temporary)) out.note(`warning: --mn-iops ${memoryIopsCap} does not change a running cluster's memory nodes (start it with \`cluster up --mn-iops\`)`);
    const redis = smallbank ? await smallBankRedis(smallbank, cluster.state.redisUrl, (line) => out.note(line)).catch(async (error: unknown) => (await cluster.release(), Promise.reject(error))) : undefined;
    try {
      const runSpec = redis ? withRedis(spec, redis.url) : spec;
      if (redis) await populateAccounts(redis.url, smallbank!.accounts!);
      // Faults are what users inject into live runs: a failed node is reported, never the end of the run.
      const { state, skipped } = withoutDownComputeNodes(cluster.state);
      const warmUp = await warmUpLive({ protocol, state, protocolOptions, spec: runSpec, operations: warmUpOps, placement: { skipReleaseProbability, colocatedClients, mutantLocalVerbs } }, (line) => out.note(line));
      const wallStart = performance.now();
      const result = await runLive({ state, protocol, protocolOptions: substrateOptions('live', protocol, protocolOptions), spec: runSpec, onProgress: (f) => bar.update(f), tolerateNodeFailures: true, colocatedClients, mutantLocalVerbs, skipReleaseProbability });
      bar.done();
      report = { ...benchReport({ protocol: result.protocol, substrate: 'live', summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: performance.now() - wallStart, digest: result.digest, switchDecisions: result.switch?.decisions, switchGrantsByRack: result.switch?.switchGrantsByRack, lockResets: protocolById(protocol).lockResets === true, ...(result.memoryNic ? { nicVerbsByNode: result.memoryNic.verbs } : {}) }), ...faultFields(result, skipped), tls: processTlsOn() ? 'mtls' : 'insecure', natsTls: processNatsTlsOn() ? 'tls' : 'plaintext', ...(result.placement ? { placement: result.placement } : {}), ...(result.memoryNic && Object.keys(result.memoryNic.utilisation).length > 0 ? { nicUtilisation: result.memoryNic.utilisation } : {}) };
      if (warmUp) report = { ...report, warmUp };
      for (const name of skipped) out.note(`warning: ${name} is not running; its clients ran on the other compute nodes`);
      history = result.history;
      if (spec.transactions) report = { ...report, transactions: txnReport(result.history, spec.transactions, result.summary.elapsedNs) };
      if (redis && report.transactions) report = { ...report, transactions: { ...report.transactions, smallbank: await checkBalances(redis.url, runSpec.transactions!, result.history) } };
      // Live verb counts are the clients' lock verbs (by phase); the application counted its data verbs itself.
      if (spec.application && result.application) {
        const { log, check } = result.application;
        const verbs = Object.values(result.verbs).reduce((a, b) => a + b, 0) + log.dataVerbs.read + log.dataVerbs.write + log.dataVerbs.faa;
        report = { ...report, application: appReport(spec.application, log, check, result.summary.elapsedNs, verbs) };
      }
      // A cluster that lost a node mid-run is no yardstick: the floor is measured on healthy ones only.
      if (floorOps > 0 && result.nodeFailures.length === 0 && result.declaredDead.length === 0) report = { ...report, floor: await measureFloor(protocol, state, protocolOptions, floorOps, spec.seed, out) };
      else if (floorOps > 0) out.note(`${protocol}: no uncontended floor (a compute node failed during the run)`);
    } finally {
      await redis?.stop();
      await cluster.release();
    }
    // Read after the release: the services flush their spans when they stop.
    if ('tracing' in cluster && cluster.tracing) report = { ...report, tracing: cluster.tracing() };
  } else {
    const run = await benchInMemory({ protocol, substrate: substrate as 'sim' | 'embedded', spec, protocolOptions, computeNodes, crashProbability, skipReleaseProbability, jitterNs, colocatedClients, costModel }, (f) => bar.update(f));
    bar.done();
    report = run.report;
    history = run.history;
    if (run.cutOff) out.note('warning: the run hit its safety horizon with acquires still pending (see liveness)');
  }
  return { report, history };
}

/** The fault part of a live bench report: present only when a node failed or was left out. */
export function faultFields(result: LiveRunResult, skippedNodes: readonly string[] = []): Pick<BenchReport, 'nodeFailures' | 'unknownOps' | 'skippedNodes' | 'declaredDead' | 'notStarted'> {
  const notStarted = result.failedNodes.filter((f) => !f.run).map((f) => ({ node: f.node, error: f.error }));
  if (result.nodeFailures.length === 0 && skippedNodes.length === 0 && result.declaredDead.length === 0 && notStarted.length === 0) return {};
  const first = result.history.reduce((min, e) => Math.min(min, e.timeNs), Infinity);
  const runStartNs = Number.isFinite(first) ? first : 0;
  const nodeFailures = summarizeNodeFailures(result.nodeFailures, runStartNs);
  return {
    nodeFailures,
    unknownOps: nodeFailures.reduce((sum, f) => sum + f.unknownOps, 0),
    skippedNodes,
    declaredDead: result.declaredDead.map((d) => ({ node: d.node, atMs: (d.atNs - runStartNs) / 1e6, reason: d.reason })),
    notStarted,
  };
}

/**
 * A temporary live cluster's switch runs the program the protocol needs (forward, fisslock,
 * netlock), for FissLock with the clients' policy and switch capacity, so the two agree.
 */
export function switchProgramOf(protocol: string, protocolOptions: ProtocolOptions): { switchProgram?: string; switchSettings?: SwitchSettings; racks?: number } {
  const program = availableProtocols().find((p) => p.id === protocol)?.switchProgram;
  if (!program) return {};
  if (!switchProgramKind(program)?.takesDeciderSettings) return { switchProgram: program };
  const capacity = Number(protocolOptions['switchCapacity'] ?? '0');
  const policy = protocolOptions['policy'];
  // --racks R: a temporary cluster gets one switch per rack (FissLock §5.4)
  const racks = Number(protocolOptions['racks'] ?? '1');
  return {
    ...(Number.isInteger(racks) && racks > 1 ? { racks } : {}),
    switchProgram: program,
    switchSettings: { ...(policy === undefined ? {} : { policy: String(policy) }), ...(Number.isInteger(capacity) && capacity > 0 ? { lockCount: capacity } : {}) },
  };
}

/**
 * The uncontended probe and the bare transport, on the same cluster right after the run:
 * one client's acquires and releases on many locks, then the gRPC stream and NATS round trips.
 */
async function measureFloor(protocol: string, state: Parameters<typeof runLive>[0]['state'], protocolOptions: ProtocolOptions, operations: number, seed: number, out: Output): Promise<FloorReport> {
  out.note(`${protocol}: ${operations} uncontended operations and the bare transport, for the floor…`);
  const roundTripsBefore = await measureRoundTrips(state);
  const { result: probe, perOperation } = await withProcessorTime(state, () =>
    runLive({ state, protocol, protocolOptions: substrateOptions('live', protocol, protocolOptions), spec: floorProbeSpec(operations, seed), tolerateNodeFailures: true }),
  );
  const counts = benchReport({ protocol, substrate: 'live', summary: probe.summary, accounting: probe.accounting, verdict: probe.verdict, wallMs: 0 });
  // redlock never gets here (it runs outside the cluster, before this path)
  const floor = floorReport(familyOf(protocol) === 'switch' ? 'switch' : 'rdma', probe.summary, counts, await measureClusterFloor(state, roundTripsBefore));
  const cpuUsPerOperation = perOperation(probe.summary.acquires);
  return cpuUsPerOperation ? { ...floor, cpuUsPerOperation } : floor;
}

