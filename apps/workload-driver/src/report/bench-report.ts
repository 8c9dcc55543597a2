import type { Verdict } from '@lockfabric/check';
import type { PhaseBreakdown, RunSummary, VerbAccounting } from '@lockfabric/workloads';
import { describePhases } from './phase-table.js';
import type { NodeFailureReport, PlacementFigures } from '../run/live.js';
import { SWITCH_GRANT_DECISIONS } from '../run/switch-decisions.js';
import { describeTxnReport } from '../run/txn-bench.js';
import type { BenchTxnReport } from '../run/txn-bench.js';
import { describeAppReport } from '@lockfabric/workloads';
import type { AppReport } from '@lockfabric/workloads';
import { verbsPerOp } from '@lockfabric/workloads';
import { describeFloor } from './floor-text.js';
import type { FloorReport } from '../run/transport-floor.js';
import type { WarmUpReport } from '../run/warm-up.js';
import type { TracingReport } from '../run/traced-cluster.js';

/** The `--json` object of `lockfabric bench`, and the row `demo` prints per protocol. */
export interface BenchReport {
  readonly protocol: string;
  readonly substrate: 'sim' | 'embedded' | 'live';
  readonly throughput: number;
  readonly latencyUs: { readonly p50: number; readonly p90: number; readonly p99: number; readonly p999: number; readonly max: number; readonly mean: number };
  /** Release latency, invoke to completion (DecLock Fig. 15 right); absent on reports built before it existed. */
  readonly releaseLatencyUs?: BenchReport['latencyUs'];
  readonly verbsPerAcquire: ReturnType<typeof verbsPerOp>;
  readonly verbsPerRelease: ReturnType<typeof verbsPerOp>;
  /** Data verbs per critical section (bench --cs-verbs), present when there were any. */
  readonly verbsPerCs?: ReturnType<typeof verbsPerOp>;
  readonly acquires: number;
  readonly releases: number;
  readonly failures: number;
  readonly failuresByCode: Readonly<Record<string, number>>;
  readonly violations: number;
  readonly livenessViolations: number;
  readonly checked: boolean;
  readonly elapsedMs: number;
  readonly wallMs: number;
  readonly digest?: string;
  readonly simEvents?: number;
  readonly nicVerbsPerSec?: number;
  /** Sim: the cost model the run was charged with (`paper`, `ideal`, a file's name). */
  readonly costModel?: string;
  /** Sim: per NIC with an inbound ceiling, the share of it the run used (0…1; DSLR Fig. 19). */
  readonly nicUtilisation?: Readonly<Record<string, number>>;
  /** Sim: per NIC, requests that waited for its inbound ceiling. */
  readonly nicThrottled?: Readonly<Record<string, number>>;
  /** sim: processor time of the run (user + system) and the rates over it, which load on a shared machine does not skew. */
  readonly cpuMs?: number;
  readonly nicVerbsPerCpuSec?: number;
  readonly simEventsPerCpuSec?: number;
  /** Verbs per second each node's NIC served over the run (sim/embedded; live: each memory node's /metrics). */
  readonly nicIops?: Readonly<Record<string, number>>;
  /** Live: compute nodes that failed mid-run, and what that did (see NodeFailureReport). */
  readonly nodeFailures?: readonly NodeFailureSummary[];
  /** Live: operations of failed nodes' clients whose outcome is unknown (invoked, never completed). */
  readonly unknownOps?: number;
  /** Live: gRPC transport security the run used (mutual TLS unless the cluster was started --insecure). */
  readonly tls?: 'mtls' | 'insecure';
  /** Live: whether NATS connections were TLS (on with gRPC TLS unless the cluster was started --insecure). */
  readonly natsTls?: 'tls' | 'plaintext';
  /** Live: compute nodes found down before the run (dead, paused, cut off): left out, their clients not started. */
  readonly downAtStart?: readonly { readonly node: number; readonly name: string; readonly reason: string; readonly clients: number }[];
  /** Live: compute nodes the coordinator declared dead during the run (ms from the first event). */
  readonly declaredDead?: readonly { readonly node: number; readonly atMs: number; readonly reason: string }[];
  /** Live: compute nodes that could not start their part of the run (their clients did not run). */
  readonly notStarted?: readonly { readonly node: number; readonly error: string }[];
  /** Acquire-latency CDF points (fraction of acquires at or under `us`), for report plots. */
  readonly latencyCdfUs?: readonly { readonly fraction: number; readonly us: number }[];
  /** Switch family: grants the switch decided itself, and their share of the acquires. */
  readonly switchGrants?: number;
  readonly switchGrantShare?: number;
  /** Live, several racks (FissLock §5.4): each rack's switch grants, in rack order (`switchGrants` adds them up). */
  readonly switchGrantsByRack?: readonly number[];
  /** Transactional workloads (`--workload tatp|tpcc|trace:FILE`): the transaction figures and serializability verdict. */
  readonly transactions?: BenchTxnReport;
  /** Live: the protocol's uncontended latency against the bare transport measured in the same run. */
  readonly floor?: FloorReport;
  /** Live: the untimed operations run before the reported run (`--warmup-ops`), not in its figures. */
  readonly warmUp?: WarmUpReport;
  /** Live with `--trace-ratio`: the sampling ratio and what the services exported. */
  readonly tracing?: TracingReport;
  /** `--tick-ms`: the run in fixed ticks from its first event. */
  readonly timeline?: readonly BenchTick[];
  /** `--racks R` (FissLock §5.4): packets each rack's switch processed, in rack order. */
  readonly switchPackets?: readonly number[];
  /** Application workloads (objectstore, btree): ops/s, p50/p99 per operation, verbs per op, the check. */
  readonly application?: AppReport;
  /** Protocols that reset locks (DecLock Fig. 16): resets completed, their mean and max latency, and their share of the acquires. */
  readonly resets?: BenchResets;
  /** Mean µs per operation in each phase the protocol marks (ShiftLock Tables 3–4), by operation kind; sim/embedded. */
  readonly phasesUs?: PhaseBreakdown;
  /** Live --colocated-clients: the memory node's clients (local) against the compute nodes' (remote). */
  readonly placement?: { readonly local: PlacementFigures; readonly remote: PlacementFigures };
}

export interface BenchResets {
  readonly count: number;
  readonly meanUs: number;
  readonly maxUs: number;
  /** count / acquires (DecLock: at most 0.0014 % of acquisitions). */
  readonly shareOfAcquires: number;
  /** Resets a client began that another client finished (counted once, by the finisher). */
  readonly finishedElsewhere: number;
}

/** One tick of a bench timeline: acquires completed in it, per second of the tick, and their latency. */
export interface BenchTick {
  readonly startMs: number;
  readonly throughput: number;
  readonly acquires: number;
  readonly failed: number;
  readonly p50Us?: number;
  readonly p99Us?: number;
}

/** One failed compute node in a bench report; times in ms from the first event of the run. */
export interface NodeFailureSummary {
  readonly node: number;
  readonly name: string;
  readonly error: string;
  readonly failedAtMs: number;
  /** History events received from it, and how long before the failure the last one was: its history after that is lost. */
  readonly historyEvents: number;
  readonly historyGapMs?: number;
  readonly unknownOps: number;
  readonly affectedLocks: number;
  readonly recoveredLocks: number;
  readonly unrecoveredLocks: readonly number[];
  /** Longest wait from the failure to a survivor's first grant of a lock the node held or waited for. */
  readonly recoveryMs?: number;
}

/** The report's view of a live run's node failures (times relative to `runStartNs`). */
export function summarizeNodeFailures(failures: readonly NodeFailureReport[], runStartNs: number): NodeFailureSummary[] {
  return failures.map((f) => ({
    node: f.node,
    name: f.name,
    error: f.error,
    failedAtMs: (f.failedAtNs - runStartNs) / 1e6,
    historyEvents: f.historyEvents,
    ...(f.lastEventNs !== undefined ? { historyGapMs: Math.max(0, f.failedAtNs - f.lastEventNs) / 1e6 } : {}),
    unknownOps: f.impact.unknownOps,
    affectedLocks: f.impact.affectedLocks.length,
    recoveredLocks: f.impact.recoveredLocks,
    unrecoveredLocks: f.impact.unrecoveredLocks,
    ...(f.impact.recoveryNs !== undefined ? { recoveryMs: f.impact.recoveryNs / 1e6 } : {}),
  }));
}

export function benchReport(input: {
  protocol: string;
  substrate: BenchReport['substrate'];
  summary: RunSummary;
  accounting: VerbAccounting;
  verdict: Verdict | undefined;
  wallMs: number;
  digest?: string | undefined;
  simEvents?: number;
  cpuMs?: number;
  nicVerbsByNode?: Readonly<Record<string, number>>;
  /** The switch program's packets by decision over the run, when the protocol went through a switch. */
  switchDecisions?: Readonly<Record<string, number>> | undefined;
  /** Several racks: each rack's switch grants, in rack order (kept only when there is more than one rack). */
  switchGrantsByRack?: readonly number[] | undefined;
  /** The protocol resets locks (its definition's `lockResets`): add `resets`. */
  lockResets?: boolean;
}): BenchReport {
  const { summary, accounting, verdict } = input;
  const phasesUs = accounting.phases.meansUs();
  const marked = Object.values(phasesUs).some((kind) => Object.keys(kind.us).some((phase) => phase !== 'unmarked'));
    const csVerbs = Object.values(accounting.counts.cs).reduce((a, b) => a + b, 0);
  const totalVerbs = Object.values(accounting.counts.acquire).reduce((a, b) => a + b, 0) + Object.values(accounting.counts.release).reduce((a, b) => a + b, 0) + csVerbs;
  return {
    protocol: input.protocol,
    substrate: input.substrate,
    throughput: summary.throughput,
    latencyUs: summary.latencyUs,
    ...(summary.releaseLatencyUs ? { releaseLatencyUs: summary.releaseLatencyUs } : {}),
    ...(summary.latencyCdfUs ? { latencyCdfUs: summary.latencyCdfUs } : {}),
    verbsPerAcquire: verbsPerOp(accounting.counts.acquire, summary.acquires),
    verbsPerRelease: verbsPerOp(accounting.counts.release, summary.releases),
    ...(csVerbs > 0 ? { verbsPerCs: verbsPerOp(accounting.counts.cs, summary.acquires) } : {}),
    acquires: summary.acquires,
    releases: summary.releases,
    failures: summary.failures,
    failuresByCode: summary.failuresByCode,
    violations: verdict?.violations.length ?? 0,
    livenessViolations: verdict ? verdict.liveness.violations.length : 0,
    checked: verdict !== undefined,
    elapsedMs: summary.elapsedNs / 1e6,
    wallMs: input.wallMs,
    ...(input.digest ? { digest: input.digest } : {}),
    ...(marked ? { phasesUs } : {}),
    ...(input.lockResets ? { resets: resetFigures(accounting, summary.acquires) } : {}),
    ...(input.nicVerbsByNode
      ? { nicIops: Object.fromEntries(Object.entries(input.nicVerbsByNode).filter(([, n]) => n > 0).map(([node, n]) => [node, summary.elapsedNs > 0 ? n / (summary.elapsedNs / 1e9) : 0])) }
      : {}),
    ...(input.switchDecisions ? switchGrantFigures(input.switchDecisions, summary.acquires) : {}),
    ...(input.switchGrantsByRack && input.switchGrantsByRack.length > 1 ? { switchGrantsByRack: [...input.switchGrantsByRack] } : {}),
    ...(input.simEvents !== undefined ? { simEvents: input.simEvents, nicVerbsPerSec: input.wallMs > 0 ? (totalVerbs / input.wallMs) * 1000 : 0 } : {}),
    ...(input.simEvents !== undefined && input.cpuMs !== undefined && input.cpuMs > 0
      ? { cpuMs: input.cpuMs, nicVerbsPerCpuSec: (totalVerbs / input.cpuMs) * 1000, simEventsPerCpuSec: (input.simEvents / input.cpuMs) * 1000 }
      : {}),
  };
}

/** `rack 0 120, rack 1 130`: one figure per rack's switch, in rack order. */
export function formatByRack(values: readonly number[]): string {
  return values.map((n, rack) => `rack ${rack} ${n}`).join(', ');
}

function resetFigures(accounting: VerbAccounting, acquires: number): BenchResets {
  const r = accounting.phases.resets;
  return {
    count: r.count,
    meanUs: r.count > 0 ? r.totalNs / r.count / 1000 : 0,
    maxUs: r.maxNs / 1000,
    shareOfAcquires: acquires > 0 ? r.count / acquires : 0,
    finishedElsewhere: r.finishedElsewhere,
  };
}

/** Grants the switch decided (NetLock queues, the FissLock decider) and their share of the acquires. */
export function switchGrantFigures(decisions: Readonly<Record<string, number>>, acquires: number): { switchGrants: number; switchGrantShare: number } {
  const switchGrants = SWITCH_GRANT_DECISIONS.reduce((sum, d) => sum + (decisions[d] ?? 0), 0);
  return { switchGrants, switchGrantShare: acquires > 0 ? Math.min(1, switchGrants / acquires) : 0 };
}

/** The checker's verdict on a run in one word, as demo prints and reports it. */
export function verdictWord(report: Pick<BenchReport, 'checked' | 'violations' | 'livenessViolations'>): 'ok' | 'violation' | 'liveness' | 'unchecked' {
  if (!report.checked) return 'unchecked';
  if (report.violations > 0) return 'violation';
  return report.livenessViolations > 0 ? 'liveness' : 'ok';
}

export function describeReport(report: BenchReport): string {
  const lines = [
    `${report.protocol} on ${report.substrate}: ${Math.round(report.throughput).toLocaleString('en-US')} ops/s over ${report.elapsedMs.toFixed(1)} ms (${report.acquires} acquires, ${report.failures} failures)`,
    `  acquire latency µs  p50 ${report.latencyUs.p50.toFixed(2)}  p90 ${report.latencyUs.p90.toFixed(2)}  p99 ${report.latencyUs.p99.toFixed(2)}  p99.9 ${report.latencyUs.p999.toFixed(2)}`,
    `  verbs per acquire   ${formatVerbs(report.verbsPerAcquire)}`,
    `  verbs per release   ${formatVerbs(report.verbsPerRelease)}`,
    ...(report.verbsPerCs ? [`  data verbs per CS   ${formatVerbs(report.verbsPerCs)}`] : []),
    `  checker             ${report.checked ? (report.violations === 0 && report.livenessViolations === 0 ? 'ok' : `${report.violations} exclusion violations, ${report.livenessViolations} liveness violations`) : 'not run'}`,
  ];
  if (Object.keys(report.failuresByCode).length > 0) lines.push(`  failures            ${Object.entries(report.failuresByCode).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  for (const f of report.nodeFailures ?? []) {
    const recovery = f.affectedLocks === 0 ? 'it held or awaited no lock' : `${f.recoveredLocks}/${f.affectedLocks} of its locks granted to survivors again${f.recoveryMs !== undefined ? ` within ${f.recoveryMs.toFixed(1)} ms` : ''}${f.unrecoveredLocks.length ? `; never again: ${f.unrecoveredLocks.slice(0, 8).join(', ')}` : ''}`;
    lines.push(`  node failure        ${f.name} at +${f.failedAtMs.toFixed(0)} ms: ${f.unknownOps} operations unknown, ${f.historyEvents} history events kept${f.historyGapMs !== undefined ? ` (last ${f.historyGapMs.toFixed(0)} ms before the failure)` : ''}; ${recovery}`);
    lines.push(`                      ${f.error}`);
  }
  for (const n of report.notStarted ?? []) lines.push(`  did not start       ${n.error}`);
  for (const d of report.declaredDead ?? []) lines.push(`  declared dead       compute node ${d.node} at +${d.atMs.toFixed(0)} ms (${d.reason}): fenced; its refused releases end its holds there`);
  if (report.tls) lines.push(`  gRPC transport      ${report.tls === 'mtls' ? 'mutual TLS' : 'INSECURE (plaintext, no peer identity)'}`);
  if (report.natsTls) lines.push(`  NATS transport      ${report.natsTls === 'tls' ? 'TLS (server verified against the cluster CA)' : 'PLAINTEXT'}`);
  for (const d of report.downAtStart ?? []) lines.push(`  down at start       ${d.name}: ${d.clients} clients not started (${d.reason})`);
  if (report.switchGrantShare !== undefined) lines.push(`  switch-decided      ${report.switchGrants ?? 0} grants (${(report.switchGrantShare * 100).toFixed(1)} % of acquires)${report.switchGrantsByRack ? `; by rack: ${formatByRack(report.switchGrantsByRack)}` : ''}`);
  if (report.nicIops && Object.keys(report.nicIops).length > 0) lines.push(`  NIC IOPS by node    ${Object.entries(report.nicIops).map(([node, iops]) => `${node}: ${Math.round(iops).toLocaleString('en-US')}/s`).join(', ')}`);
  if (report.nicUtilisation) lines.push(`  NIC ceiling used    ${Object.entries(report.nicUtilisation).map(([node, u]) => `${node}: ${(u * 100).toFixed(1)} % (${(report.nicThrottled?.[node] ?? 0).toLocaleString('en-US')} verbs waited)`).join(', ')}`);
  if (report.costModel) lines.push(`  cost model          ${report.costModel}`);
  if (report.transactions) lines.push(describeTxnReport(report.transactions));
  if (report.warmUp) lines.push(`  warm-up             ${report.warmUp.operations} operations before the run, not counted${report.warmUp.violations > 0 ? ` (${report.warmUp.violations} exclusion violations)` : ''}`);
  if (report.floor) lines.push(describeFloor(report.floor).replace(/^/gm, '  '));
  if (report.tracing) lines.push(`  tracing             ${describeTracing(report.tracing)}`);
  if (report.timeline?.length) {
    const rates = report.timeline.map((t) => t.throughput);
    lines.push(`  timeline            ${report.timeline.length} ticks: ${Math.round(Math.min(...rates)).toLocaleString('en-US')}–${Math.round(Math.max(...rates)).toLocaleString('en-US')} ops/s (--json has each tick)`);
  }
  if (report.application) lines.push(describeAppReport(report.application));
  if (report.phasesUs) lines.push(describePhases(report.phasesUs));
  for (const [where, p] of Object.entries(report.placement ?? {})) {
    lines.push(`  ${`${where} clients`.padEnd(20)}${p.clients}: ${p.acquires} acquires, p50 ${p.acquireP50Us.toFixed(1)} µs, mean ${p.acquireMeanUs.toFixed(1)} µs; verbs per acquire ${p.verbsPerAcquire.toFixed(2)}, per release ${p.verbsPerRelease.toFixed(2)}`);
  }
  if (report.resets) {
    const r = report.resets;
    lines.push(`  lock resets         ${r.count}${r.count > 0 ? ` (${(r.shareOfAcquires * 100).toFixed(4)} % of acquires), mean ${r.meanUs.toFixed(2)} µs, max ${r.maxUs.toFixed(2)} µs` : ''}`);
  }
  if (report.simEvents !== undefined) lines.push(`  simulator           ${report.simEvents.toLocaleString('en-US')} events in ${report.wallMs.toFixed(0)} ms wall, ${Math.round(report.nicVerbsPerSec ?? 0).toLocaleString('en-US')} verbs/s${report.cpuMs !== undefined ? `; ${report.cpuMs.toFixed(0)} ms CPU, ${Math.round(report.nicVerbsPerCpuSec ?? 0).toLocaleString('en-US')} verbs per CPU-second` : ''}`);
  return lines.join('\n');
}

export function formatVerbs(v: BenchReport['verbsPerAcquire']): string {
  const parts = Object.entries({ read: v.read, write: v.write, cas: v.cas, faa: v.faa, 'm-cas': v.maskedCas, 'm-faa': v.maskedFaa })
    .filter(([, n]) => n > 0)
    .map(([op, n]) => `${op} ${n.toFixed(2)}`);
  return `${v.total.toFixed(2)} total${parts.length ? ` (${parts.join(', ')})` : ''}`;
}

function describeTracing(tracing: TracingReport): string {
  if (tracing.exporter === 'none') return 'off';
  const where = tracing.exporter === 'sink' ? `counting sink: ${tracing.exportRequests ?? 0} OTLP exports, ${((tracing.exportBytes ?? 0) / 1e6).toFixed(2)} MB` : '$OTEL_EXPORTER_OTLP_ENDPOINT';
  return `${tracing.ratio * 100} % head sampling (${where})`;
}
