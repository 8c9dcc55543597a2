// A live bench run: on a temporary or running cluster, or RedLock over Redis. bench.ts loads this
// module only for --substrate live, since it brings gRPC, NATS, the OpenTelemetry SDK and Redis.
import { processNatsTlsOn, processTlsOn } from '@lockfabric/live';
import type { writeHistoryJsonl } from '@lockfabric/check';
import { availableProtocols, protocolById, switchProgramKind } from '@lockfabric/lock-catalog';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { appReport } from '@lockfabric/workloads';
import type { SmallBankWorkloadSpec } from '@lockfabric/workloads';
import { familyOf } from '../report/family.js';
import type { SwitchSettings } from '../cluster/local-cluster.js';
import { isAlive, readClusterState } from '../cluster/local-cluster.js';
import { runLive } from '../run/live.js';
import type { LiveRunResult } from '../run/live.js';
import { substrateOptions } from '../run/live-defaults.js';
import { warmUpLive } from '../run/warm-up.js';
import { floorProbeSpec, floorReport, measureClusterFloor, measureRoundTrips, withProcessorTime } from '../run/transport-floor.js';
import type { FloorReport } from '../run/transport-floor.js';
import { acquireTracedCluster } from '../run/traced-cluster.js';
import { discoverRemoteCluster } from '../run/remote-discovery.js';
import { benchReport, summarizeNodeFailures } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import type { ProgressBar } from '../report/progress.js';
import { txnReport } from '../run/txn-bench.js';
import { checkBalances, populateAccounts, runRedLock, smallBankRedis, withRedis } from '../run/smallbank-bench.js';
import { REDLOCK } from '../run/smallbank-flags.js';
import { DEFAULT_CLUSTER_DIR, acquireLiveCluster } from './context.js';
import type { Output } from './context.js';
import type { BenchOneInput } from './bench.js';

/** One protocol's live run and its report. */
export async function benchLive(input: BenchOneInput, bar: ProgressBar): Promise<{ report: BenchReport; history: Parameters<typeof writeHistoryJsonl>[0] }> {
  const { protocol, spec, protocolOptions, computeNodes, skipReleaseProbability, computeMemoryPorts, floorOps, warmUpOps, colocatedClients, mutantLocalVerbs, tracing, values, reader, out } = input;
  const memoryIopsCap = reader.optionalNumber('mn-iops', { min: 1 });
  let report: BenchReport;
  let history;
  const smallbank = spec.transactions?.workload.kind === 'smallbank' ? (spec.transactions.workload as SmallBankWorkloadSpec) : undefined;
  if (protocol === REDLOCK && smallbank) {
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
  const remoteAt = values['compute-nodes-at'];
  const cluster =
    typeof remoteAt === 'string'
      ? { state: await discoverRemoteCluster({ computeNodesAt: [remoteAt], memoryNodesAt: [reader.string('memory-nodes-at', '')], computeMemoryPorts, mutantStrictDiscovery: values['mutant-strict-discovery'] === true }), release: async () => undefined }
      : await acquireTracedCluster(tracing, (env) => acquireLiveCluster(reader.string('cluster-dir', DEFAULT_CLUSTER_DIR), out, { computeNodes, insecure: values['insecure'] === true, ...(memoryIopsCap ? { memoryIopsCap } : {}), ...switchProgramOf(protocol, protocolOptions), ...(env ? { env } : {}) }));
  if (memoryIopsCap && !('temporary' in cluster && cluster.temporary)) out.note(`warning: --mn-iops ${memoryIopsCap} does not change a running cluster's memory nodes (start it with \`cluster up --mn-iops\`)`);
  const redis = smallbank ? await smallBankRedis(smallbank, cluster.state.redisUrl, (line) => out.note(line)).catch(async (error: unknown) => (await cluster.release(), Promise.reject(error))) : undefined;
  try {
    const runSpec = redis ? withRedis(spec, redis.url) : spec;
    if (redis) await populateAccounts(redis.url, smallbank!.accounts!);
    // Faults are what users inject into live runs: a failed node (even one down before the start) is reported, never the end of the run.
    const { state } = cluster;
    const warmUp = await warmUpLive({ protocol, state, protocolOptions, spec: runSpec, operations: warmUpOps, placement: { skipReleaseProbability, colocatedClients, mutantLocalVerbs } }, (line) => out.note(line));
    const wallStart = performance.now();
    const result = await runLive({ state, protocol, protocolOptions: substrateOptions('live', protocol, protocolOptions), spec: runSpec, onProgress: (f) => bar.update(f), tolerateNodeFailures: true, colocatedClients, mutantLocalVerbs, skipReleaseProbability });
    bar.done();
    report = { ...benchReport({ protocol: result.protocol, substrate: 'live', summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: performance.now() - wallStart, digest: result.digest, switchDecisions: result.switch?.decisions, switchGrantsByRack: result.switch?.switchGrantsByRack, lockResets: protocolById(protocol).lockResets === true, ...(result.memoryNic ? { nicVerbsByNode: result.memoryNic.verbs } : {}) }), ...faultFields(result), tls: processTlsOn() ? 'mtls' : 'insecure', natsTls: processNatsTlsOn() ? 'tls' : 'plaintext', ...(result.placement ? { placement: result.placement } : {}), ...(result.memoryNic && Object.keys(result.memoryNic.utilisation).length > 0 ? { nicUtilisation: result.memoryNic.utilisation } : {}) };
    if (warmUp) report = { ...report, warmUp };
    noteDownAtStart(result, out);
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
  return { report, history };
}

/** One warning per compute node the run found down before it started. */
export function noteDownAtStart(result: LiveRunResult, out: Output): void {
  for (const d of result.downAtStart) out.note(`warning: ${result.protocol}: ${d.name} was down at the start (${d.reason}); its ${d.clients} clients did not start`);
}

/** The fault part of a live bench report: present only when a node failed or was left out. */
export function faultFields(result: LiveRunResult): Pick<BenchReport, 'nodeFailures' | 'unknownOps' | 'downAtStart' | 'declaredDead' | 'notStarted'> {
  const notStarted = result.failedNodes.filter((f) => !f.run).map((f) => ({ node: f.node, error: f.error }));
  const downAtStart = result.downAtStart.map(({ node, name, reason, clients }) => ({ node, name, reason, clients }));
  if (result.nodeFailures.length === 0 && downAtStart.length === 0 && result.declaredDead.length === 0 && notStarted.length === 0) return {};
  const first = result.history.reduce((min, e) => Math.min(min, e.timeNs), Infinity);
  const runStartNs = Number.isFinite(first) ? first : 0;
  const nodeFailures = summarizeNodeFailures(result.nodeFailures, runStartNs);
  return {
    nodeFailures,
    unknownOps: nodeFailures.reduce((sum, f) => sum + f.unknownOps, 0),
    downAtStart,
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

