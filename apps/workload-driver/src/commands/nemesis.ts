import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { summarizeVerdict, writeHistoryJsonl } from '@lockfabric/check';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError, errorMessage } from '@lockfabric/ports';
import { DEFAULT_PROTOCOL_ID } from '@lockfabric/lock-catalog';
import { timelineFromHistory, writeFaultReport } from '@lockfabric/report';
import type { FaultReport, FaultWindow } from '@lockfabric/report';
import { RealClock } from '@lockfabric/realtime';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { WORKLOAD_FLAGS, parseCommandArgs, readWorkload, workloadFlags } from '../cli/args.js';
import type { FlagReader } from '../cli/args.js';
import { LocalChaos } from '../chaos/local-chaos.js';
import { sleep } from '../cluster/process-control.js';
import { isAlive, readClusterState } from '../cluster/local-cluster.js';
import type { ClusterState } from '../cluster/local-cluster.js';
import { SWITCH_PACKET_FAULTS, applyFault, healAll } from '../nemesis/executor.js';
import type { AppliedFault, FaultActions } from '../nemesis/executor.js';
import { KubeChaos } from '../nemesis/kube-chaos.js';
import type { KubeTarget } from '../nemesis/kube-chaos.js';
import { DEFAULT_KUBE_NAMESPACE } from '../chaos/chaos-request.js';
import { discoverRemoteCluster } from '../run/remote-cluster.js';
import { faultRecoveryNs } from '../nemesis/recovery.js';
import { COMPUTE_FAULTS, NEMESIS_FAULTS, SWITCH_FAULTS, parseFaults, planSchedule } from '../nemesis/schedule.js';
import type { NemesisFault, PlannedFault } from '../nemesis/schedule.js';
import { benchReport } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import { ProgressBar } from '../report/progress.js';
import { runLive } from '../run/live.js';
import type { LiveRunResult } from '../run/live.js';
import { substrateOptions } from '../run/live-defaults.js';
import { faultFields, switchProgramOf } from './bench.js';
import { DEFAULT_CLUSTER_DIR, acquireLiveCluster, output, withoutDownComputeNodes } from './context.js';

export const NEMESIS_HELP = `lockfabric nemesis — a workload on the live cluster under a seeded schedule of faults,
then a verdict (safety, then liveness after healing) and a report

  --protocol, -p ID        protocol id (default caslock); workload flags as for bench
                           (defaults: 12 clients, 24 locks, 60 000 ms, 1 ms think, 1 ms critical
                           section, 2 000 ms acquire timeout)
  --faults LIST            comma-separated, from: ${NEMESIS_FAULTS.join(', ')}
                           (default kill,pause,partition)
  --interval-ms MS         mean fault-free gap between faults (default 6000)
  --fault-duration-ms MS   mean length of a fault (default 3000)
  --quiet-ms MS            fault-free time at the start (the baseline) and the end (default 5000)
  --seed N                 derives the schedule (and the workload); the same seed, the same schedule
  --heal-budget-ms MS      after healing, every lock must be granted within this (default 10000)
  --report DIR             where report.html, report.json, the SVGs and history.jsonl go
                           (default .lockfabric/nemesis/<protocol>-seed<N>)
  --cluster-dir D          the cluster (${DEFAULT_CLUSTER_DIR}); without one a temporary cluster is started
  --compute-nodes N        compute nodes of a temporary cluster (default 3)
  --dry-run                print the schedule and exit (with --kube-context: and its kubectl commands)
  --json                   print one JSON object
Kubernetes (the manifests of infra/k8s):
  --kube-context CTX       inject the faults with kubectl in this context; the workload runs from
                           here against --compute-nodes-at / --memory-nodes-at, as bench does
  --namespace NS           (default ${DEFAULT_KUBE_NAMESPACE})
  --compute-nodes-at LIST  compute nodes, host:port,…   --memory-nodes-at LIST  memory nodes
  --compute-memory-port P  (default 50055)

Faults run one at a time; a kill is healed by a restart, a pause by a resume; a partition is a
real cut with 'cluster up --cut-proxy' (a temporary cluster has the proxy), else SIGSTOP.
Exit status: 0 safe and live, 1 an exclusion violation, 3 not live after healing, 2 bad flags,
4 an unexpected error.`;

const FLAGS = {
  ...WORKLOAD_FLAGS,
  faults: { type: 'string' },
  'interval-ms': { type: 'string' },
  'fault-duration-ms': { type: 'string' },
  'quiet-ms': { type: 'string' },
  'heal-budget-ms': { type: 'string' },
  report: { type: 'string' },
  'cluster-dir': { type: 'string' },
  'compute-nodes': { type: 'string' },
  'dry-run': { type: 'boolean' },
  'kube-context': { type: 'string' },
  namespace: { type: 'string' },
  'compute-nodes-at': { type: 'string' },
  'memory-nodes-at': { type: 'string' },
  'compute-memory-port': { type: 'string' },
} as const;

/** Timeline resolution of the report and of throughput-based recovery. */
const BUCKET_MS = 250;

/** The `--json` object of `lockfabric nemesis`. */
export interface NemesisReport {
  readonly protocol: string;
  readonly seed: number;
  readonly command: string;
  readonly schedule: readonly PlannedFault[];
  readonly faults: readonly (AppliedFault & { readonly recoveryMs?: number })[];
  readonly run: BenchReport;
  readonly verdict: { readonly safety: 'ok' | 'violation'; readonly liveness: 'ok' | 'violation' | 'unchecked'; readonly exitCode: number; readonly lines: readonly string[] };
  readonly heal: { readonly actions: readonly string[]; readonly budgetMs: number; readonly acquires: number; readonly failures: number; readonly failuresByCode: Readonly<Record<string, number>>; readonly locksGranted: number; readonly locksProbed: number; readonly problems: readonly string[] };
  readonly reportDir: string;
  readonly files: readonly string[];
}

export async function nemesisCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('nemesis', argv, FLAGS);
  if (values['help']) return (console.log(NEMESIS_HELP), 0);
  const { spec, protocolOptions, reader } = readWorkload(values, { clients: 12, locks: 24, readRatio: 0, distribution: 'uniform', durationMs: 60_000, thinkNs: 1_000_000, criticalSectionNs: 1_000_000, timeoutMs: 2_000 });
  const faults = parseFaults(reader.string('faults', 'kill,pause,partition'), reader.problems);
  const intervalMs = reader.number('interval-ms', 6_000, { min: 0 });
  const faultDurationMs = reader.number('fault-duration-ms', 3_000, { min: 100 });
  const quietMs = reader.number('quiet-ms', 5_000, { min: 0 });
  const healBudgetMs = reader.number('heal-budget-ms', 10_000, { min: 100 });
  const computeNodes = reader.number('compute-nodes', 3, { integer: true, min: 2 });
  const kube = readKube(values, reader);
  if (spec.durationMs === undefined) reader.problems.push('--duration-ms: a nemesis run is bounded by time (--operations alone cannot place the faults)');
  if (spec.durationMs !== undefined && spec.durationMs < 2 * quietMs + faultDurationMs) reader.problems.push(`--duration-ms ${spec.durationMs}: too short for one fault of ~${faultDurationMs} ms between two quiet stretches of ${quietMs} ms`);
  reader.done();
  const protocol = reader.string('protocol', DEFAULT_PROTOCOL_ID);
  const out = output(values['json'] === true);
  const reportDir = reader.string('report', join('.lockfabric', 'nemesis', `${protocol}-seed${spec.seed}`));
  const command = ['lockfabric nemesis', ...workloadFlags(protocol, spec, protocolOptions), `--faults ${faults.join(',')}`, `--interval-ms ${intervalMs}`, `--fault-duration-ms ${faultDurationMs}`, `--quiet-ms ${quietMs}`, `--heal-budget-ms ${healBudgetMs}`].join(' ');

  const clusterDir = reader.string('cluster-dir', DEFAULT_CLUSTER_DIR);
  if (values['dry-run']) {
    // No cluster is started for a dry run: a temporary one (or the manifests' pods) would have these names.
    const running = kube ? undefined : readClusterState(clusterDir);
    const layout = running && running.processes.some((p) => isAlive(p.pid)) ? running : kube ? kubeLayout(computeNodes) : temporaryLayout(computeNodes);
    const state = checkTargets(layout, faults, kube !== undefined);
    const schedule = planSchedule({ seed: spec.seed, faults, durationMs: spec.durationMs!, intervalMs, faultDurationMs, quietMs, targets: targetsOf(state, kube !== undefined) });
    const plans = kube ? schedule.map((f) => kubeStepsOf(new KubeChaos({ ...kube.target, memoryNodes: 1 }), f)) : undefined;
    if (out.json) console.log(JSON.stringify({ protocol, seed: spec.seed, command, schedule, ...(plans ? { kubectl: plans } : {}) }));
    else
      for (const [i, f] of schedule.entries()) {
        console.log(`${f.id} +${(f.atMs / 1000).toFixed(1)} s  ${f.kind} ${f.target} for ${f.durationMs} ms`);
        for (const line of plans?.[i] ?? []) console.log(`    ${line.split('\n').join('\n    ')}`);
      }
    return 0;
  }
  if (kube) {
    const state = await discoverRemoteCluster({ computeNodesAt: [kube.computeNodesAt], memoryNodesAt: [kube.memoryNodesAt], computeMemoryPort: kube.computeMemoryPort });
    const target: KubeTarget = { ...kube.target, memoryNodes: state.processes.filter((p) => p.role === 'memory').length };
    const chaos = new KubeChaos(target);
    checkTargets(state, faults, true);
    const targets = targetsOf(state, true);
    const schedule = planSchedule({ seed: spec.seed, faults, durationMs: spec.durationMs!, intervalMs, faultDurationMs, quietMs, targets });
    const names = [...new Set(schedule.map((f) => f.target))];
    out.note(`nemesis on ${target.context}/${target.namespace}: ${schedule.length} faults over ${spec.durationMs} ms (seed ${spec.seed}): ${schedule.map((f) => `${f.kind} ${f.target}`).join(', ')}`);
    const cluster: NemesisCluster = { actions: chaos, state: () => state, heal: () => chaos.healAll(names) };
    return await runNemesis({ protocol, protocolOptions, spec, schedule, cluster, out, healBudgetMs, reportDir, command });
  }
  const cluster = await acquireLiveCluster(clusterDir, out, { computeNodes, withCutProxy: faults.includes('partition'), ...switchProgramOf(protocol, protocolOptions) });
  try {
    const chaos = new LocalChaos(cluster.dir);
    const state = checkTargets(chaos.state(), faults, false);
    const schedule = planSchedule({ seed: spec.seed, faults, durationMs: spec.durationMs!, intervalMs, faultDurationMs, quietMs, targets: targetsOf(state, false) });
    out.note(`nemesis: ${schedule.length} faults over ${spec.durationMs} ms (seed ${spec.seed}): ${schedule.map((f) => `${f.kind} ${f.target}`).join(', ')}`);
    const local: NemesisCluster = { actions: chaos, state: () => chaos.state(), heal: () => healAll(chaos) };
    return await runNemesis({ protocol, protocolOptions, spec, schedule, cluster: local, out, healBudgetMs, reportDir, command });
  } finally {
    await cluster.release();
  }
}

/** Where faults land and what the run sees: the local cluster, or pods on Kubernetes. */
interface NemesisCluster {
  readonly actions: FaultActions;
  state(): ClusterState;
  /** Resume, reconnect and restart whatever the schedule left broken; returns what it did. */
  heal(): Promise<string[]>;
}

interface KubeFlags {
  readonly target: Omit<KubeTarget, 'memoryNodes'>;
  readonly computeNodesAt: string;
  readonly memoryNodesAt: string;
  readonly computeMemoryPort: number;
}

/** The Kubernetes flags, all problems listed; undefined without --kube-context. */
function readKube(values: Record<string, unknown>, reader: FlagReader): KubeFlags | undefined {
  const context = values['kube-context'];
  const remoteFlags = ['namespace', 'compute-nodes-at', 'memory-nodes-at', 'compute-memory-port'];
  if (context === undefined) {
    for (const flag of remoteFlags) if (values[flag] !== undefined) reader.problems.push(`--${flag} applies with --kube-context only`);
    return undefined;
  }
  if (typeof context !== 'string' || context.trim() === '') reader.problems.push('--kube-context: expected a context name');
  const namespace = reader.string('namespace', DEFAULT_KUBE_NAMESPACE);
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)) reader.problems.push(`--namespace: ${JSON.stringify(namespace)} is not a Kubernetes namespace name`);
  const computeNodesAt = reader.string('compute-nodes-at', '');
  const memoryNodesAt = reader.string('memory-nodes-at', '');
  if (values['dry-run'] !== true && (computeNodesAt === '' || memoryNodesAt === '')) reader.problems.push('--kube-context: the workload needs --compute-nodes-at and --memory-nodes-at (the nodes as this machine reaches them)');
  if (values['cluster-dir'] !== undefined) reader.problems.push('--cluster-dir is a local cluster; with --kube-context the nodes come from --compute-nodes-at');
  const computeMemoryPort = reader.number('compute-memory-port', 50055, { integer: true, min: 1, max: 65535 });
  return { target: { context: String(context), namespace }, computeNodesAt, memoryNodesAt, computeMemoryPort };
}

/** The kubectl lines a fault will run, step by step, for the dry run. */
function kubeStepsOf(kube: KubeChaos, fault: PlannedFault): string[] {
  switch (fault.kind) {
    case 'kill':
    case 'coordinator-kill':
      return [...kube.plan('kill', fault.target), `sleep ${(fault.durationMs / 1000).toFixed(3)}`, `# the controller's replacement pod: wait until Ready`];
    case 'pause':
      return [...kube.plan('pause', fault.target), `sleep ${(fault.durationMs / 1000).toFixed(3)}`, ...kube.plan('resume', fault.target)];
    case 'partition':
      return kube.plan('partition', fault.target, { durationMs: fault.durationMs });
    case 'restart':
    case 'memory-restart':
    case 'switch-restart':
      return kube.plan('restart', fault.target);
    case 'nats-restart':
      return kube.plan('nats-restart', 'nats');
    default:
      return [
        ...kube.plan('switch-faults', fault.target, { faults: { ...SWITCH_PACKET_FAULTS[fault.kind]!, clear: false } }),
        `sleep ${(fault.durationMs / 1000).toFixed(3)}`,
        ...kube.plan('switch-faults', fault.target, { faults: { loss: 0, duplicate: 0, reorder: 0, delayNs: 0, clear: true } }),
      ];
  }
}

interface NemesisRun {
  readonly protocol: string;
  readonly protocolOptions: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly schedule: readonly PlannedFault[];
  readonly cluster: NemesisCluster;
  readonly out: ReturnType<typeof output>;
  readonly healBudgetMs: number;
  readonly reportDir: string;
  readonly command: string;
}

async function runNemesis(n: NemesisRun): Promise<number> {
  const clock = new RealClock();
  const bar = new ProgressBar(`nemesis ${n.protocol}`, { enabled: !n.out.json });
  const { state } = withoutDownComputeNodes(n.cluster.state());
  const wallStart = performance.now();
  const applied: AppliedFault[] = [];
  let runStartMs: number | undefined;
  let nemesisDone: Promise<void> = Promise.resolve();
  // The schedule counts from the run's first progress report: the cluster is prepared by then.
  const run = runLive({
    state,
    protocol: n.protocol,
    protocolOptions: substrateOptions('live', n.protocol, n.protocolOptions),
    spec: n.spec,
    tolerateNodeFailures: true,
    onProgress: (f) => {
      bar.update(f, applied.length > 0 ? `${applied.length}/${n.schedule.length} faults` : undefined);
      if (runStartMs !== undefined) return;
      runStartMs = Date.now();
      nemesisDone = executeSchedule(n, runStartMs, clock, applied);
    },
  });
  run.catch(() => undefined);
  const result = await run;
  await nemesisDone;
  bar.done();
  const healActions = await n.cluster.heal();
  n.out.note(`healed: ${healActions.length > 0 ? healActions.join('; ') : 'nothing left to heal'}; probing every lock (budget ${n.healBudgetMs} ms)…`);
  const heal = await probeLiveness(n, healActions);
  const report = buildReport(n, result, applied, heal, performance.now() - wallStart);
  mkdirSync(n.reportDir, { recursive: true });
  await writeHistoryJsonl(result.history, join(n.reportDir, 'history.jsonl'));
  const written = await writeFaultReport(report.fault, n.reportDir);
  const files = [written.html, written.json, ...written.svgs, join(n.reportDir, 'history.jsonl')];
  const json: NemesisReport = { ...report.json, reportDir: n.reportDir, files };
  if (n.out.json) console.log(JSON.stringify(json));
  else console.log(describeNemesis(json));
  return json.verdict.exitCode;
}

/** Runs the schedule against the cluster, one fault after another, at its times from `startMs`. */
async function executeSchedule(n: NemesisRun, startMs: number, clock: RealClock, applied: AppliedFault[]): Promise<void> {
  for (const fault of n.schedule) {
    const wait = startMs + fault.atMs - Date.now();
    if (wait > 0) await sleep(wait);
    const done = await applyFault(fault, { chaos: n.cluster.actions, nowNs: () => clock.nowNs(), sleep });
    applied.push(done);
    n.out.note(`${done.id} ${done.kind} ${done.target}: ${done.error ? `FAILED: ${done.error}` : done.detail}`);
  }
}

interface HealProbe {
  readonly actions: readonly string[];
  readonly budgetMs: number;
  readonly acquires: number;
  readonly failures: number;
  readonly failuresByCode: Readonly<Record<string, number>>;
  readonly locksGranted: number;
  readonly locksProbed: number;
  readonly problems: readonly string[];
}

/**
 * Liveness after healing: a short fault-free run in which every lock must be granted again — each
 * acquire within the heal budget (its timeout), no failure, the checker satisfied. Lock ids are
 * drawn uniformly, so a lock no acquire happened to name is reported as unprobed, not as dead.
 */
async function probeLiveness(n: NemesisRun, actions: readonly string[]): Promise<HealProbe> {
  const { state } = withoutDownComputeNodes(n.cluster.state());
  const probeSpec: WorkloadSpec = { clients: Math.min(n.spec.clients, 8), locks: n.spec.locks, readRatio: 0, distribution: 'uniform', operations: Math.max(64, n.spec.locks * 8), thinkNs: 0, criticalSectionNs: 0, seed: n.spec.seed + 1, timeoutMs: n.healBudgetMs };
  const problems: string[] = [];
  let result: LiveRunResult | undefined;
  try {
    result = await runLive({ state, protocol: n.protocol, protocolOptions: substrateOptions('live', n.protocol, n.protocolOptions), spec: probeSpec, tolerateNodeFailures: true });
  } catch (error) {
    problems.push(`the probe run failed: ${errorMessage(error)}`);
  }
  const granted = new Set<number>();
  const named = new Set<number>();
  for (const e of result?.history ?? []) {
    if (e.op !== 'acquire') continue;
    named.add(e.lock);
    if (e.phase === 'ok') granted.add(e.lock);
  }
  const summary = result?.summary;
  if (summary && summary.failures > 0) problems.push(`${summary.failures} acquires or releases failed after healing (${Object.entries(summary.failuresByCode).map(([k, v]) => `${k} ${v}`).join(', ')})`);
  const never = [...named].filter((l) => !granted.has(l));
  if (never.length > 0) problems.push(`locks never granted after healing: ${never.slice(0, 16).join(', ')}${never.length > 16 ? ', …' : ''}`);
  if (result?.verdict && !result.verdict.ok) problems.push(`the probe's history fails the checker: ${summarizeVerdict(result.verdict, 2).split('\n').join(' ')}`);
  if (result && result.failedNodes.length > 0) problems.push(`compute nodes failed during the probe: ${result.failedNodes.map((f) => f.error).join('; ')}`);
  return { actions, budgetMs: n.healBudgetMs, acquires: summary?.acquires ?? 0, failures: summary?.failures ?? 0, failuresByCode: summary?.failuresByCode ?? {}, locksGranted: granted.size, locksProbed: named.size, problems };
}

function buildReport(n: NemesisRun, result: LiveRunResult, applied: readonly AppliedFault[], heal: HealProbe, wallMs: number): { json: Omit<NemesisReport, 'reportDir' | 'files'>; fault: FaultReport } {
  const run: BenchReport = { ...benchReport({ protocol: result.protocol, substrate: 'live', summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs, digest: result.digest }), ...faultFields(result) };
  const times = result.history.map((e) => e.timeNs);
  const startNs = times.reduce((a, b) => Math.min(a, b), applied[0]?.startNs ?? 0);
  const endNs = times.reduce((a, b) => Math.max(a, b), applied.at(-1)?.endNs ?? startNs);
  const bucketNs = BUCKET_MS * 1e6;
  const { buckets } = timelineFromHistory(result.history, { bucketMs: BUCKET_MS, startNs, endNs });
  const firstFaultNs = applied[0]?.startNs ?? endNs;
  const faults = applied.map((f) => {
    const killed = COMPUTE_FAULTS.has(f.kind) ? result.nodeFailures.find((nf) => `compute-${nf.node}` === f.target && nf.failedAtNs >= f.startNs - 1e9 && nf.failedAtNs <= f.endNs + 1e9) : undefined;
    const impact = killed?.impact;
    const locksBackAtNs = !killed || !impact ? undefined : impact.unrecoveredLocks.length > 0 ? ('never' as const) : killed.failedAtNs + (impact.recoveryNs ?? 0);
    const recoveryNs = faultRecoveryNs({ history: result.history, bucketNs, runStartNs: startNs, firstFaultNs, fault: f, ...(locksBackAtNs !== undefined ? { locksBackAtNs } : {}), ...(killed ? { victimPrefix: `${killed.node}/` } : {}) });
    return { ...f, ...(recoveryNs !== undefined ? { recoveryMs: Math.round(recoveryNs / 1e5) / 10 } : {}) };
  });
  const safety = (result.verdict?.violations.length ?? 0) > 0 ? 'violation' : 'ok';
  const liveness = heal.problems.length > 0 || (result.verdict?.liveness.ok ?? true) === false ? 'violation' : 'ok';
  const exitCode = safety === 'violation' ? 1 : liveness === 'violation' ? 3 : 0;
  const lines = [
    `safety: ${safety === 'ok' ? 'no exclusion violation' : `${result.verdict?.violations.length} exclusion violations`} over ${result.history.length} events`,
    ...(result.verdict ? summarizeVerdict(result.verdict, 3).split('\n').slice(1) : []),
    `liveness after healing: ${heal.problems.length === 0 ? `every probed lock granted (${heal.locksGranted}/${heal.locksProbed}), no failure` : heal.problems.join('; ')}`,
  ];
  const verdict = { safety, liveness, exitCode, lines } as const;
  const windows: FaultWindow[] = faults.map((f) => ({ id: f.id, kind: f.kind, target: f.target, startNs: f.startNs, endNs: f.endNs, ...(f.recoveryMs !== undefined ? { recoveryMs: f.recoveryMs } : {}), ...(f.error ? { note: `failed: ${f.error}` } : {}) }));
  const fault: FaultReport = {
    title: `nemesis: ${n.protocol} under ${[...new Set(n.schedule.map((f) => f.kind))].join(', ')}`,
    protocol: n.protocol,
    substrate: 'live',
    seed: n.spec.seed,
    startNs,
    endNs,
    bucketMs: BUCKET_MS,
    buckets,
    faults: windows,
    verdict,
    unknownOps: run.unknownOps ?? 0,
    failuresByCode: run.failuresByCode,
    command: n.command,
  };
  return { json: { protocol: n.protocol, seed: n.spec.seed, command: n.command, schedule: n.schedule, faults, run, verdict, heal }, fault };
}

function describeNemesis(r: NemesisReport): string {
  const lines = [
    `nemesis ${r.protocol} (seed ${r.seed}): ${r.verdict.safety === 'ok' ? 'SAFE' : 'UNSAFE'}, ${r.verdict.liveness === 'ok' ? 'LIVE after healing' : 'NOT LIVE after healing'} (exit ${r.verdict.exitCode})`,
    ...r.verdict.lines.map((l) => `  ${l}`),
    `  run: ${Math.round(r.run.throughput).toLocaleString('en-US')} ops/s, ${r.run.acquires} acquires, ${r.run.failures} failures${Object.keys(r.run.failuresByCode).length ? ` (${Object.entries(r.run.failuresByCode).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}, ${r.run.unknownOps ?? 0} unknown`,
    '  faults:',
    ...r.faults.map((f) => `    ${f.id} ${f.kind.padEnd(16)} ${f.target.padEnd(14)} ${((f.endNs - f.startNs) / 1e6).toFixed(0).padStart(6)} ms  recovery ${f.recoveryMs === undefined ? 'not seen' : `${f.recoveryMs.toFixed(0)} ms`}${f.error ? `  FAILED: ${f.error}` : ''}`),
    `  report: ${r.files[0] ?? r.reportDir}`,
  ];
  return lines.join('\n');
}

/** Every fault's target must exist in the cluster; problems are listed together (exit 2). */
function checkTargets(state: ClusterState, faults: readonly NemesisFault[], onKube: boolean): ClusterState {
  const problems: string[] = [];
  // On Kubernetes the manifests always deploy the switch, the coordinator and NATS.
  const has = (role: string) => onKube || state.processes.some((p) => p.role === role);
  if (faults.some((f) => SWITCH_FAULTS.has(f)) && !has('switch')) problems.push('--faults: switch faults need a switch-dataplane in the cluster');
  if (faults.includes('coordinator-kill') && !has('coordinator')) problems.push('--faults: coordinator-kill needs a coordinator in the cluster');
  if (faults.includes('nats-restart') && !has('nats')) problems.push('--faults: nats-restart needs the cluster to run its own nats-server (not NATS_URL)');
  if (state.processes.filter((p) => p.role === 'compute').length < 2 && faults.some((f) => COMPUTE_FAULTS.has(f))) problems.push('--faults: compute-node faults need at least two compute nodes (one must survive)');
  if (problems.length > 0) throw new ConfigError(problems);
  return state;
}

/** Compute-node faults spare the lowest compute node: some protocols' lock server lives there (srvlock). */
function targetsOf(state: ClusterState, onKube: boolean): Parameters<typeof planSchedule>[0]['targets'] {
  const name = (role: string) => state.processes.find((p) => p.role === role)?.name;
  const computes = state.processes.filter((p) => p.role === 'compute').sort((a, b) => a.node - b.node);
  return {
    compute: computes.slice(1).map((p) => p.name),
    ...optional('memory', name('memory')),
    ...optional('switch', name('switch') ?? (onKube ? 'switch' : undefined)),
    ...optional('coordinator', name('coordinator') ?? (onKube ? 'coordinator' : undefined)),
    ...optional('nats', name('nats') ?? (onKube ? 'nats' : undefined)),
  };
}

/** The manifests' node ids for a dry run: memory node 0, compute nodes 1…N (infra/k8s/overlays/dev). */
function kubeLayout(computeNodes: number): ClusterState {
  const record = (name: string, role: ClusterState['processes'][number]['role'], node: number) => ({ name, role, node, pid: 0, log: '', argv: [] });
  return { cluster: 'kubernetes', natsUrl: '', startedAt: '', processes: [record('memory-0', 'memory', 0), ...Array.from({ length: computeNodes }, (_, i) => record(`compute-${i + 1}`, 'compute', i + 1))] };
}

/** The processes of a temporary cluster (startLocalCluster's numbering), for a dry run without one. */
function temporaryLayout(computeNodes: number): ClusterState {
  const record = (name: string, role: ClusterState['processes'][number]['role'], node: number) => ({ name, role, node, pid: 0, log: '', argv: [] });
  return {
    cluster: 'local',
    natsUrl: '',
    startedAt: '',
    processes: [
      record('nats', 'nats', -1),
      record('memory-0', 'memory', 0),
      ...Array.from({ length: computeNodes }, (_, i) => record(`compute-${i + 1}`, 'compute', i + 1)),
      record(`switch-${computeNodes + 1}`, 'switch', computeNodes + 1),
      record(`coordinator-${computeNodes + 2}`, 'coordinator', computeNodes + 2),
    ],
  };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
