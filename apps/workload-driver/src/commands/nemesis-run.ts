// A nemesis run: the workload on the live cluster while the schedule's faults land, then the
// verdict and the report. nemesis.ts loads this module only after the flags are checked.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { summarizeVerdict, writeHistoryJsonl } from '@lockfabric/check';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { errorMessage } from '@lockfabric/ports';
import { timelineFromHistory, writeFaultReport } from '@lockfabric/report';
import type { FaultReport, FaultWindow } from '@lockfabric/report';
import { RealClock } from '@lockfabric/realtime';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { LocalChaos } from '../chaos/local-chaos.js';
import { sleep } from '../cluster/process-control.js';
import type { ClusterState } from '../cluster/local-cluster.js';
import { applyFault, healAll } from '../nemesis/executor.js';
import type { AppliedFault, FaultActions } from '../nemesis/executor.js';
import { KubeChaos } from '../nemesis/kube-chaos.js';
import type { KubeTarget } from '../nemesis/kube-chaos.js';
import { discoverRemoteCluster } from '../run/remote-discovery.js';
import { faultRecoveryNs } from '../nemesis/recovery.js';
import { runSchedule } from '../nemesis/run-schedule.js';
import type { SkippedFault } from '../nemesis/run-schedule.js';
import { COMPUTE_FAULTS, planSchedule } from '../nemesis/schedule.js';
import type { NemesisFault, PlannedFault } from '../nemesis/schedule.js';
import { benchReport } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import { ProgressBar } from '../report/progress.js';
import { runLive } from '../run/live.js';
import type { LiveRunResult } from '../run/live.js';
import { substrateOptions } from '../run/live-defaults.js';
import { faultFields, switchProgramOf } from './bench-live.js';
import { acquireLiveCluster } from './context.js';
import type { Output } from './context.js';
import { checkTargets, targetsOf } from './nemesis.js';
import type { KubeFlags, NemesisReport } from './nemesis.js';

/** Timeline resolution of the report and of throughput-based recovery. */
const BUCKET_MS = 250;

/** What the command read from its flags, for a run. */
export interface NemesisCommandRun {
  readonly kube: KubeFlags | undefined;
  readonly clusterDir: string;
  readonly computeNodes: number;
  readonly faults: readonly NemesisFault[];
  readonly protocol: string;
  readonly protocolOptions: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly out: Output;
  readonly healBudgetMs: number;
  readonly reportDir: string;
  readonly command: string;
  readonly intervalMs: number;
  readonly faultDurationMs: number;
  readonly quietMs: number;
}

/** The run on Kubernetes or on the local (a running or a temporary) cluster; returns the exit code. */
export async function runNemesisCommand(c: NemesisCommandRun): Promise<number> {
  const { kube, clusterDir, computeNodes, faults, protocol, protocolOptions, spec, out, healBudgetMs, reportDir, command, intervalMs, faultDurationMs, quietMs } = c;
  if (kube) {
    const state = await discoverRemoteCluster({ computeNodesAt: [kube.computeNodesAt], memoryNodesAt: [kube.memoryNodesAt], computeMemoryPorts: kube.computeMemoryPorts });
    const target: KubeTarget = { ...kube.target, memoryNodes: state.processes.filter((p) => p.role === 'memory').length };
    const chaos = new KubeChaos(target);
    checkTargets(state, faults, true);
    const targets = targetsOf(state, true);
    const schedule = planSchedule({ seed: spec.seed, faults, durationMs: spec.durationMs!, intervalMs, faultDurationMs, quietMs, targets });
    const names = [...new Set(schedule.map((f) => f.target))];
    out.note(`nemesis on ${target.context}/${target.namespace}: ${schedule.length} faults over ${spec.durationMs} ms (seed ${spec.seed}): ${schedule.map((f) => `${f.kind} ${f.target}`).join(', ')}`);
    const cluster: NemesisCluster = { actions: chaos, state: () => state, heal: () => chaos.healAll(names) };
    return await runNemesis({ protocol, protocolOptions, spec, schedule, cluster, out, healBudgetMs, reportDir, command, quietMs });
  }
  const cluster = await acquireLiveCluster(clusterDir, out, { computeNodes, withCutProxy: faults.includes('partition'), ...switchProgramOf(protocol, protocolOptions) });
  try {
    const chaos = new LocalChaos(cluster.dir);
    const state = checkTargets(chaos.state(), faults, false);
    const schedule = planSchedule({ seed: spec.seed, faults, durationMs: spec.durationMs!, intervalMs, faultDurationMs, quietMs, targets: targetsOf(state, false) });
    out.note(`nemesis: ${schedule.length} faults over ${spec.durationMs} ms (seed ${spec.seed}): ${schedule.map((f) => `${f.kind} ${f.target}`).join(', ')}`);
    const local: NemesisCluster = { actions: chaos, state: () => chaos.state(), heal: () => healAll(chaos) };
    return await runNemesis({ protocol, protocolOptions, spec, schedule, cluster: local, out, healBudgetMs, reportDir, command, quietMs });
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

interface NemesisRun {
  readonly protocol: string;
  readonly protocolOptions: ProtocolOptions;
  readonly spec: WorkloadSpec;
  readonly schedule: readonly PlannedFault[];
  readonly cluster: NemesisCluster;
  readonly out: Output;
  readonly healBudgetMs: number;
  readonly reportDir: string;
  readonly command: string;
  /** The fault-free stretch the schedule keeps at the end of the workload. */
  readonly quietMs: number;
}

async function runNemesis(n: NemesisRun): Promise<number> {
  const clock = new RealClock();
  const bar = new ProgressBar(`nemesis ${n.protocol}`, { enabled: !n.out.json });
  const state = n.cluster.state();
  const wallStart = performance.now();
  const applied: AppliedFault[] = [];
  const skipped: SkippedFault[] = [];
  let workloadOver = false;
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
      nemesisDone = executeSchedule(n, runStartMs, clock, applied, skipped, () => workloadOver);
    },
  });
  run.then(
    () => void (workloadOver = true),
    () => void (workloadOver = true),
  );
  const result = await run;
  await nemesisDone;
  bar.done();
  const healActions = await n.cluster.heal();
  n.out.note(`healed: ${healActions.length > 0 ? healActions.join('; ') : 'nothing left to heal'}; probing every lock (budget ${n.healBudgetMs} ms)…`);
  const heal = await probeLiveness(n, healActions);
  const report = buildReport(n, result, applied, skipped, heal, performance.now() - wallStart);
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
async function executeSchedule(n: NemesisRun, startMs: number, clock: RealClock, applied: AppliedFault[], skipped: SkippedFault[], workloadOver: () => boolean): Promise<void> {
  const done = await runSchedule(n.schedule, { startMs, durationMs: n.spec.durationMs ?? 0, quietMs: n.quietMs }, {
    nowMs: () => Date.now(),
    sleep,
    apply: (fault) => applyFault(fault, { chaos: n.cluster.actions, nowNs: () => clock.nowNs(), sleep }),
    workloadOver,
    onApplied: (f) => {
      applied.push(f);
      n.out.note(`${f.id} ${f.kind} ${f.target}: ${f.error ? `FAILED: ${f.error}` : f.detail}`);
    },
  });
  skipped.push(...done.skipped);
  for (const f of done.skipped) n.out.note(`${f.id} ${f.kind} ${f.target}: skipped: ${f.reason}`);
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
  const state = n.cluster.state();
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

function buildReport(n: NemesisRun, result: LiveRunResult, applied: readonly AppliedFault[], skipped: readonly SkippedFault[], heal: HealProbe, wallMs: number): { json: Omit<NemesisReport, 'reportDir' | 'files'>; fault: FaultReport } {
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
  return { json: { protocol: n.protocol, seed: n.spec.seed, command: n.command, schedule: n.schedule, faults, skipped, run, verdict, heal }, fault };
}

function describeNemesis(r: NemesisReport): string {
  const lines = [
    `nemesis ${r.protocol} (seed ${r.seed}): ${r.verdict.safety === 'ok' ? 'SAFE' : 'UNSAFE'}, ${r.verdict.liveness === 'ok' ? 'LIVE after healing' : 'NOT LIVE after healing'} (exit ${r.verdict.exitCode})`,
    ...r.verdict.lines.map((l) => `  ${l}`),
    `  run: ${Math.round(r.run.throughput).toLocaleString('en-US')} ops/s, ${r.run.acquires} acquires, ${r.run.failures} failures${Object.keys(r.run.failuresByCode).length ? ` (${Object.entries(r.run.failuresByCode).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''}, ${r.run.unknownOps ?? 0} unknown`,
    '  faults:',
    ...r.faults.map((f) => `    ${f.id} ${f.kind.padEnd(16)} ${f.target.padEnd(14)} ${((f.endNs - f.startNs) / 1e6).toFixed(0).padStart(6)} ms  recovery ${f.recoveryMs === undefined ? 'not seen' : `${f.recoveryMs.toFixed(0)} ms`}${f.error ? `  FAILED: ${f.error}` : ''}`),
    ...r.skipped.map((f) => `    ${f.id} ${f.kind.padEnd(16)} ${f.target.padEnd(14)} skipped: ${f.reason}`),
    `  report: ${r.files[0] ?? r.reportDir}`,
  ];
  return lines.join('\n');
}
