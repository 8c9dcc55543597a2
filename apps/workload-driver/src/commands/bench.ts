// Parsing and checking the flags loads nothing heavy, so a configuration error exits 2 at once: the
// live path (bench-live.ts: gRPC, NATS, OpenTelemetry, Redis) and the HTML renderer (Vega) are
// imported where a run needs them (e2e/tests/cli-lazy-imports.test.ts holds this).
import { writeHistoryJsonl } from '@lockfabric/check';
import { DEFAULT_PROTOCOL_ID, availableProtocols } from '@lockfabric/lock-catalog';
import { renamedOptionProblem } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { WORKLOAD_FLAGS, parseCommandArgs, readWorkload } from '../cli/args.js';
import type { FlagReader } from '../cli/args.js';
import type { BenchRunReport } from '@lockfabric/report';
import { familyOf } from '../report/family.js';
import { addressListProblems } from '../run/remote-cluster.js';
import { DEFAULT_LIVE_WARMUP_OPS, liveOptionProblems } from '../run/live-defaults.js';
import { describeFloorByTracing } from '../report/floor-by-tracing.js';
import { DEFAULT_FLOOR_ROUNDS } from '../run/floor-rounds.js';
import type { TraceSetting } from '../run/otlp-sink.js';
import { describeReport, verdictWord } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import { ProgressBar } from '../report/progress.js';
import { runJobs } from '../workers/pool.js';
import { benchInMemory, benchTimeline } from './bench-in-memory.js';
import type { InMemoryBenchJob } from './bench-in-memory.js';
import { TXN_FLAGS, readTxnWorkload } from '../run/txn-bench.js';
import { APP_FLAGS, isAppWorkload, readAppWorkload } from '../run/app-bench.js';
import { DYNAMIC_FLAGS, readDynamicWorkload } from '../run/dynamic-bench.js';
import { REDLOCK, smallBankProblems } from '../run/smallbank-flags.js';
import { COST_KNOB_FLAGS, COST_MODEL_FLAGS, readCostModel } from '../cli/cost-model.js';
import type { CostModel } from '@lockfabric/fabric';
import { CS_DATA_REGION_BYTES } from '@lockfabric/workloads';
import { output } from './context.js';
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
    'mutant-strict-discovery': { type: 'boolean' },
    report: { type: 'string' },
    'floor-ops': { type: 'string' },
    'floor-rounds': { type: 'string' },
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
  const computeMemoryPorts = reader.portList('compute-memory-port', [50055]);
  if (values['mutant-strict-discovery'] === true && values['compute-nodes-at'] === undefined) reader.problems.push('--mutant-strict-discovery: give --compute-nodes-at');
  for (const flag of ['compute-nodes-at', 'memory-nodes-at']) reader.problems.push(...addressListProblems(flag, values[flag]));
  const floorOps = reader.number('floor-ops', substrate === 'live' ? 300 : 0, { integer: true, min: 0 });
  const floorRounds = reader.number('floor-rounds', DEFAULT_FLOOR_ROUNDS, { integer: true, min: 1 });
  if (values['floor-rounds'] !== undefined && substrate !== 'live') reader.problems.push('--floor-rounds: the transport floor is a live figure (sim and embedded have no transport)');
  const warmUpOps = reader.number('warmup-ops', substrate === 'live' ? DEFAULT_LIVE_WARMUP_OPS : 0, { integer: true, min: 0 });
  if (warmUpOps > 0 && substrate !== 'live') reader.problems.push('--warmup-ops: only live runs warm their service processes up (sim and embedded have none)');
  const colocatedClients = reader.number('colocated-clients', 0, { integer: true, min: 0 });
  const tickFlagMs = reader.optionalNumber('tick-ms', { min: 0.001 });
  const mutantLocalVerbs = values['mutant-local-verbs'] === true;
  if (mutantLocalVerbs && (substrate !== 'live' || colocatedClients === 0)) reader.problems.push('--mutant-local-verbs: give --substrate live and --colocated-clients N');
  if (colocatedClients > microSpec.clients) reader.problems.push(`--colocated-clients: ${colocatedClients} is more than --clients ${microSpec.clients}`);
  if (floorOps > 0 && substrate !== 'live') reader.problems.push('--floor-ops: the transport floor is a live figure (sim and embedded have no transport)');
  // --trace-ratio reads a running cluster's state, which needs the cluster code
  const traceSettings = values['trace-ratio'] === undefined ? undefined : (await import('../run/traced-cluster.js')).readTraceSettings(values, substrate, reader.problems);
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
    const { report: run, history } = await benchOne({ protocol, substrate, spec, protocolOptions, costModel, computeNodes, crashProbability, skipReleaseProbability, jitterNs, computeMemoryPorts, floorOps, floorRounds, warmUpOps, colocatedClients, mutantLocalVerbs, tracing, values, reader, out });
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
    const { writeReport } = await import('@lockfabric/report');
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

export interface BenchOneInput {
  readonly protocol: string;
  readonly substrate: string;
  readonly spec: Awaited<ReturnType<typeof readTxnWorkload>>;
  readonly protocolOptions: ProtocolOptions;
  readonly costModel: CostModel;
  readonly computeNodes: number;
  readonly crashProbability: number;
  readonly skipReleaseProbability: number;
  readonly jitterNs: number | undefined;
  /** --compute-nodes-at: each compute node's descriptor-memory port (one for all, or one each). */
  readonly computeMemoryPorts: readonly number[];
  /** Live: uncontended probe operations after the run (0: none). */
  readonly floorOps: number;
  /** Live: rounds the probe and the bare round trips alternate in (the probe's operations split among them). */
  readonly floorRounds: number;
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
  const { protocol, substrate, spec, protocolOptions, costModel, computeNodes, crashProbability, skipReleaseProbability, jitterNs, colocatedClients, out } = input;
  const bar = new ProgressBar(`${protocol} ${substrate}`, { enabled: !out.json });
  if (substrate === 'live') return (await import('./bench-live.js')).benchLive(input, bar);
  const run = await benchInMemory({ protocol, substrate: substrate as 'sim' | 'embedded', spec, protocolOptions, computeNodes, crashProbability, skipReleaseProbability, jitterNs, colocatedClients, costModel }, (f) => bar.update(f));
  bar.done();
  if (run.cutOff) out.note('warning: the run hit its safety horizon with acquires still pending (see liveness)');
  return { report: run.report, history: run.history };
}
