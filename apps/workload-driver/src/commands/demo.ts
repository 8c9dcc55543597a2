import { join } from 'node:path';
import { availableProtocols } from '@lockfabric/lock-catalog';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { DemoRunReport } from '@lockfabric/report';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { COST_MODEL_FLAGS, readCostModel } from '../cli/cost-model.js';
import type { CostModel } from '@lockfabric/fabric';
import { locateNatsServer } from '@lockfabric/nats-server';
import { runInMemory } from '../run/in-memory.js';
import { substrateOptions } from '../run/live-defaults.js';
import { benchReport, formatByRack, formatVerbs, verdictWord } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import { familyOf } from '../report/family.js';
import { ProgressBar } from '../report/progress.js';
import { renderTable } from '../report/table.js';
import { output } from './context.js';
import type { Output } from './context.js';
import { DEMO_TXN_DEFAULT_OPERATIONS, DEMO_TXN_PROTOCOLS, demoTxnRow, demoTxnSpec, demoTxnTable, readTxnProtocols } from './demo-txn.js';
import type { DemoTxnRow } from './demo-txn.js';

export const DEFAULT_DEMO_REPORT_DIR = join('.lockfabric', 'demo');

/** The demo's live warm-up per protocol, as a share of its run: 1 000 operations for the default 4 000. */
export const DEMO_WARMUP_SHARE = 0.25;

export const DEMO_HELP = `lockfabric demo — bring up a local cluster, run a short workload per protocol, compare

  Every protocol of both families: the RDMA family on the emulated NIC, the switch family
  (fisslock, netlock, srvlock, parlock) through the emulated switch. Live (real NATS, gRPC and one
  process per service) when nats-server is on PATH or NATS_URL is set; otherwise everything runs
  embedded in this process. Override with --substrate. Live switch-family protocols whose switch
  program the cluster does not run get a temporary cluster of their own.
  --substrate S     live | embedded | sim
  --operations N    acquires per protocol (default 4000)
  --warmup-ops N    live: operations each protocol runs untimed first, so the services run its
                    path in optimised code (default a quarter of --operations; 0: none)
  --txn-protocols L transactions section: TPC-C (1 warehouse, strict 2PL) over these protocols
                    (default ${DEMO_TXN_PROTOCOLS.join(',')}: RDMA spin, RDMA handover, switch; none: skip)
  --txn-operations N transactions per protocol (default ${DEMO_TXN_DEFAULT_OPERATIONS})
  --cost-model M    sim: paper (default) | ideal | FILE (see lockfabric bench --help)
  --report DIR      where report.html, report.json and the plots go (default ${DEFAULT_DEMO_REPORT_DIR})
  --json            print one JSON object (the report: every protocol with its checker verdict)`;

/** A demo row: the bench report of one protocol, with its family and the checker's word. */
export type DemoRow = BenchReport & { readonly family: ReturnType<typeof familyOf>; readonly verdict: ReturnType<typeof verdictWord> };

export async function demoCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('demo', argv, { substrate: { type: 'string' }, operations: { type: 'string' }, 'warmup-ops': { type: 'string' }, report: { type: 'string' }, 'txn-protocols': { type: 'string' }, 'txn-operations': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, ...COST_MODEL_FLAGS });
  if (values['help']) return (console.log(DEMO_HELP), 0);
  const reader = new FlagReader(values);
  const operations = reader.number('operations', 4_000, { integer: true, min: 1 });
  const liveAvailable = Boolean(process.env['NATS_URL']) || locateNatsServer() !== undefined;
  const substrate = reader.string('substrate', liveAvailable ? 'live' : 'embedded');
  if (!['live', 'embedded', 'sim'].includes(substrate)) reader.problems.push(`--substrate: expected live, embedded or sim, got ${JSON.stringify(substrate)}`);
  const reportDir = reader.string('report', DEFAULT_DEMO_REPORT_DIR);
  const warmUpOps = reader.number('warmup-ops', substrate === 'live' ? Math.ceil(operations * DEMO_WARMUP_SHARE) : 0, { integer: true, min: 0 });
  if (warmUpOps > 0 && substrate !== 'live') reader.problems.push('--warmup-ops: only live runs warm their service processes up (sim and embedded have none)');
  const txnOperations = reader.number('txn-operations', DEMO_TXN_DEFAULT_OPERATIONS, { integer: true, min: 1 });
  const txnIds = readTxnProtocols(values['txn-protocols'] as string | undefined, reader.problems);
  const costModel = readCostModel(values, reader);
  if (substrate !== 'sim' && values['cost-model'] !== undefined) reader.problems.push('--cost-model: a cost model is virtual time, sim only');
  reader.done();
  const out = output(values['json'] === true);
  out.note(
    substrate === 'live'
      ? 'substrate: live — nats-server, a memory node, two compute nodes, a switch and a coordinator as separate processes'
      : substrate === 'embedded'
        ? `substrate: embedded — the whole cluster in this process${liveAvailable ? '' : ' (nats-server not found; install it for the live substrate)'}`
        : 'substrate: sim — virtual time, deterministic',
  );
  const spec: WorkloadSpec = { clients: 16, locks: 64, readRatio: 0.5, distribution: { zipf: 0.9 }, operations, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 1, timeoutMs: 2_000 };
  // RDMA family first, then the switch family, each in catalog order.
  const protocols = [...availableProtocols().filter((p) => p.fabric === 'verbs'), ...availableProtocols().filter((p) => p.fabric === 'switch')];
  const txn: DemoTxnPlan = { ids: new Set(txnIds), spec: demoTxnSpec(txnOperations, substrate), rows: new Map() };
  const wallStart = performance.now();
  const { reports, transport } = substrate === 'live' ? await (await import('./demo-live.js')).runLiveDemo(protocols, spec, out, txn, warmUpOps) : { reports: await runInMemoryDemo(protocols, spec, substrate as 'sim' | 'embedded', out, txn, costModel), transport: undefined };
  // Catalog order, like the tables above; a protocol not in this build's catalog is skipped.
  const txnRows = protocols.flatMap((p) => txn.rows.get(p.id) ?? []);
  const rows: DemoRow[] = reports.map((r) => ({ ...r, family: familyOf(r.protocol), verdict: verdictWord(r) }));
  const document: DemoRunReport & { results: DemoRow[] } = {
    kind: 'demo',
    version: 1,
    substrate,
    workload: { clients: spec.clients, locks: spec.locks, readRatio: spec.readRatio, distribution: 'zipf:0.9', operations, thinkNs: spec.thinkNs, criticalSectionNs: spec.criticalSectionNs, seed: spec.seed, timeoutMs: spec.timeoutMs ?? 0 },
    ...(transport ? { transport } : {}),
    wallMs: performance.now() - wallStart,
    results: rows,
    ...(txnRows.length > 0 ? { transactions: { workload: 'tpcc', warehouses: 1, clients: txn.spec.clients, operations: txnOperations, results: txnRows } } : {}),
  };
  const { writeReport } = await import('@lockfabric/report');
  const written = await writeReport(document, reportDir);
  if (out.json) {
    console.log(JSON.stringify({ ...document, reportHtml: written.html }));
  } else {
    console.log(`\nworkload: ${spec.clients} clients, ${spec.locks} locks, zipf 0.9, 50% shared, ${operations} acquires, 1 µs critical section`);
    console.log(`\nRDMA family (emulated NIC)\n${demoTable(rows.filter((r) => r.family === 'rdma'), false)}`);
    console.log(`\nswitch family (emulated switch; switch-decided: grants the switch made itself)\n${demoTable(rows.filter((r) => r.family === 'switch'), true)}`);
    for (const line of demoRackLines(rows)) console.log(line);
    if (txnRows.length > 0) console.log(`\ntransactions: TPC-C, 1 warehouse, ${txn.spec.clients} clients, ${txnOperations} per protocol, strict 2PL (p50/p99: first acquire to last release)\n${demoTxnTable(txnRows)}`);
    // transport.ts is loaded already: only the live demo measures the transport
    if (transport) console.log(`\n${(await import('./transport.js')).describeTransportRoundTrips(transport)}`);
    console.log(`\nreport with plots: ${written.html}`);
  }
  return reports.some((r) => r.violations > 0) || txnRows.some((r) => r.verdict === 'violation') ? 1 : 0;
}

/** Which protocols get a transaction run, its spec, and the rows the runs produce. */
export interface DemoTxnPlan {
  readonly ids: ReadonlySet<string>;
  readonly spec: WorkloadSpec;
  readonly rows: Map<string, DemoTxnRow>;
}

/** The comparison table; the switch family's has the switch-decided share. */
export function demoTable(rows: readonly DemoRow[], switchFamily: boolean): string {
  const headers = ['protocol', 'ops/s', 'p50 µs', 'p99 µs', 'verbs/acquire', 'verbs/release', 'failures', ...(switchFamily ? ['switch-decided'] : []), 'checker'];
  return renderTable(
    headers,
    rows.map((r) => [
      r.protocol,
      Math.round(r.throughput),
      round2(r.latencyUs.p50),
      round2(r.latencyUs.p99),
      formatVerbs(r.verbsPerAcquire),
      formatVerbs(r.verbsPerRelease),
      r.failures,
      ...(switchFamily ? [r.switchGrantShare === undefined ? '–' : `${(r.switchGrantShare * 100).toFixed(1)} %`] : []),
      r.verdict === 'ok' ? 'ok' : r.verdict === 'violation' ? `${r.violations} violations` : r.verdict,
    ]),
  );
}

/** A cluster of several racks: each switch-family row's grants per rack's switch, one line per protocol. */
export function demoRackLines(rows: readonly BenchReport[]): string[] {
  return rows.flatMap((r) => (r.switchGrantsByRack ? [`${r.protocol}: switch-decided grants by rack's switch: ${formatByRack(r.switchGrantsByRack)}`] : []));
}

async function runInMemoryDemo(protocols: readonly ProtocolDefinition[], spec: WorkloadSpec, substrate: 'sim' | 'embedded', out: Output, txn: DemoTxnPlan, costModel: CostModel): Promise<BenchReport[]> {
  const reports: BenchReport[] = [];
  for (const protocol of protocols) {
    const bar = new ProgressBar(protocol.id.padEnd(12), { enabled: !out.json });
    // Embedded runs on wall-clock timers and takes the live protocol defaults (see substrateOptions).
    const result = await runInMemory({ substrate, protocol: protocol.id, protocolOptions: substrateOptions(substrate, protocol.id), spec, ...(substrate === 'sim' ? { costModel } : {}), onProgress: (f) => bar.update(f) });
    bar.done();
    const report = benchReport({ protocol: protocol.id, substrate: result.substrate, summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: result.wallMs, switchDecisions: result.switchDecisions });
    reports.push(result.costModel ? { ...report, costModel: result.costModel.name } : report);
    if (!txn.ids.has(protocol.id)) continue;
    const txnBar = new ProgressBar(`${protocol.id} tpcc`.padEnd(12), { enabled: !out.json });
    const run = await runInMemory({ substrate, protocol: protocol.id, protocolOptions: substrateOptions(substrate, protocol.id), spec: txn.spec, onProgress: (f) => txnBar.update(f) });
    txnBar.done();
    txn.rows.set(protocol.id, demoTxnRow(protocol.id, txn.spec, run.history, run.summary.elapsedNs, run.verdict?.violations.length));
  }
  return reports;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
