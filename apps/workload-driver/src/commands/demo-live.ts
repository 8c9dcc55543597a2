// The live demo: the running (or a temporary) cluster, then a temporary cluster per other switch
// program. demo.ts loads this module only for --substrate live (it brings gRPC, NATS and OpenTelemetry).
import { join } from 'node:path';
import { DEFAULT_SWITCH_PROGRAM } from '@lockfabric/lock-catalog';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import type { ClusterState } from '../cluster/local-cluster.js';
import { SwitchControlClient } from '@lockfabric/live';
import { runLive } from '../run/live.js';
import type { LiveRunResult } from '../run/live.js';
import { warmUpLive } from '../run/warm-up.js';
import { substrateOptions } from '../run/live-defaults.js';
import { addressOf } from '../run/remote-cluster.js';
import { benchReport } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import { ProgressBar } from '../report/progress.js';
import { noteDownAtStart, switchProgramOf } from './bench-live.js';
import { DEFAULT_CLUSTER_DIR, acquireLiveCluster } from './context.js';
import type { Output } from './context.js';
import { measureTransport } from './transport.js';
import type { TransportFigures } from './transport.js';
import { demoTxnRow } from './demo-txn.js';
import type { DemoTxnPlan } from './demo.js';

/** A protocol's demo row from its live run: the switch figures of every rack's switch, not only rack 0's. */
export function liveDemoReport(protocol: string, result: LiveRunResult, wallMs: number): BenchReport {
  return benchReport({ protocol, substrate: 'live', summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs, switchDecisions: result.switch?.decisions, switchGrantsByRack: result.switch?.switchGrantsByRack });
}

/**
 * Live: the RDMA family and the switch protocols whose program the cluster's switch runs go on
 * that cluster; each other switch program (fisslock, netlock) gets a temporary cluster, one after
 * another, since a switch runs one program from its start.
 */
export async function runLiveDemo(protocols: readonly ProtocolDefinition[], spec: WorkloadSpec, out: Output, txn: DemoTxnPlan, warmUpOps: number): Promise<{ reports: BenchReport[]; transport: TransportFigures | undefined }> {
  const byId = new Map<string, BenchReport>();
  let transport: TransportFigures | undefined;
  let later: ProtocolDefinition[] = [];
  const cluster = await acquireLiveCluster(DEFAULT_CLUSTER_DIR, out);
  try {
    out.note('measuring the raw transport for comparison…');
    transport = await measureTransport(5_000, cluster.state.natsUrl);
    const program = await switchProgramOfCluster(cluster.state);
    const here = protocols.filter((p) => p.fabric === 'verbs' || (p.switchProgram !== undefined && p.switchProgram === program));
    later = protocols.filter((p) => !here.includes(p));
    for (const protocol of here) byId.set(protocol.id, await runOneLive(cluster.state, protocol, spec, out, txn, warmUpOps));
  } finally {
    await cluster.release();
  }
  // One temporary cluster per switch program, started after the previous one stopped.
  const byProgram = new Map<string, ProtocolDefinition[]>();
  for (const p of later) byProgram.set(p.switchProgram ?? DEFAULT_SWITCH_PROGRAM, [...(byProgram.get(p.switchProgram ?? DEFAULT_SWITCH_PROGRAM) ?? []), p]);
  for (const [program, group] of byProgram) {
    const own = await acquireLiveCluster(join(DEFAULT_CLUSTER_DIR, '..', `demo-${program}`), out, switchProgramOf((group[0] as ProtocolDefinition).id, {}));
    try {
      for (const protocol of group) byId.set(protocol.id, await runOneLive(own.state, protocol, spec, out, txn, warmUpOps));
    } finally {
      await own.release();
    }
  }
  return { reports: protocols.map((p) => byId.get(p.id)).filter((r): r is BenchReport => r !== undefined), transport };
}

async function runOneLive(state: ClusterState, protocol: ProtocolDefinition, spec: WorkloadSpec, out: Output, txn: DemoTxnPlan, warmUpOps: number): Promise<BenchReport> {
  const warmUp = await warmUpLive({ protocol: protocol.id, state, spec, operations: warmUpOps }, (line) => out.note(line));
  const bar = new ProgressBar(protocol.id.padEnd(12), { enabled: !out.json });
  const start = performance.now();
  // A node lost mid-demo costs its clients' figures, not the whole comparison.
  const result = await runLive({ state, protocol: protocol.id, protocolOptions: substrateOptions('live', protocol.id), spec, onProgress: (f) => bar.update(f), tolerateNodeFailures: true });
  bar.done();
  for (const f of result.failedNodes) out.note(`warning: ${protocol.id}: ${f.error}`);
  noteDownAtStart(result, out);
  if (txn.ids.has(protocol.id)) {
    // On the same cluster, right after the protocol's micro run (a switch program stays loaded).
    const txnBar = new ProgressBar(`${protocol.id} tpcc`.padEnd(12), { enabled: !out.json });
    const run = await runLive({ state, protocol: protocol.id, protocolOptions: substrateOptions('live', protocol.id), spec: txn.spec, onProgress: (f) => txnBar.update(f), tolerateNodeFailures: true });
    txnBar.done();
    txn.rows.set(protocol.id, demoTxnRow(protocol.id, txn.spec, run.history, run.summary.elapsedNs, run.verdict?.violations.length));
  }
  const report = liveDemoReport(protocol.id, result, performance.now() - start);
  return warmUp ? { ...report, warmUp } : report;
}

/** The program the cluster's switch runs, or undefined when it has no reachable switch. */
async function switchProgramOfCluster(state: ClusterState): Promise<string | undefined> {
  const record = state.processes.find((p) => p.role === 'switch' && p.grpc !== undefined);
  if (!record) return undefined;
  const control = new SwitchControlClient(addressOf(record, record.grpc), 5_000);
  try {
    return (await control.describe()).program;
  } catch {
    return undefined;
  } finally {
    control.close();
  }
}
