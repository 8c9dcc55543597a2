// One protocol's bench run on sim or embedded, as a plain job: what `bench --workers` sends to a worker thread.
import type { writeHistoryJsonl } from '@lockfabric/check';
import type { CostModel } from '@lockfabric/fabric';
import { protocolById } from '@lockfabric/lock-catalog';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import { MAX_TIMELINE_BUCKETS, timelineFromHistory } from '@lockfabric/report/timeline';
import { appReport } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { benchReport } from '../report/bench-report.js';
import type { BenchReport, BenchTick } from '../report/bench-report.js';
import { nicCeilingFigures } from '../report/nic-ceiling.js';
import { runInMemory } from '../run/in-memory.js';
import { substrateOptions } from '../run/live-defaults.js';
import { txnReport } from '../run/txn-bench.js';

type History = Parameters<typeof writeHistoryJsonl>[0];

/** Everything one in-memory run needs; structured-cloneable, so it crosses to a worker as is. */
export interface InMemoryBenchJob {
  readonly protocol: string;
  readonly substrate: 'sim' | 'embedded';
  readonly spec: WorkloadSpec;
  readonly protocolOptions: ProtocolOptions;
  readonly computeNodes: number;
  readonly crashProbability: number;
  readonly skipReleaseProbability: number;
  readonly jitterNs: number | undefined;
  readonly colocatedClients: number;
  /** Add the timeline (bench --tick-ms) to the report. */
  readonly tickMs?: number | undefined;
  /** Sim: the hardware the run is charged with (plain data). */
  readonly costModel?: CostModel | undefined;
}

/** Runs the job and builds its report (with the timeline when `tickMs` is set). */
export async function benchInMemory(job: InMemoryBenchJob, onProgress?: (fraction: number) => void): Promise<{ report: BenchReport; history: History; cutOff: boolean }> {
  const { protocol, substrate, spec, protocolOptions, crashProbability, skipReleaseProbability, jitterNs, colocatedClients } = job;
  const result = await runInMemory({
    substrate,
    protocol,
    protocolOptions: substrateOptions(substrate, protocol, protocolOptions),
    spec,
    computeNodes: job.computeNodes,
    ...(crashProbability > 0 ? { crashProbability } : {}),
    ...(skipReleaseProbability > 0 ? { skipReleaseProbability } : {}),
    ...(jitterNs !== undefined ? { jitterNs } : {}),
    ...(colocatedClients > 0 ? { colocatedClients } : {}),
    ...(substrate === 'sim' && job.costModel ? { costModel: job.costModel } : {}),
    ...(onProgress ? { onProgress } : {}),
    ...(substrate === 'sim' ? { measureCpu: true } : {}),
  });
  let report = benchReport({ protocol: result.protocol, substrate: result.substrate, summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: result.wallMs, digest: result.digest, nicVerbsByNode: Object.fromEntries(Object.entries(result.nicCounters).map(([node, c]) => [node, c.verbs])), ...(substrate === 'sim' ? { simEvents: result.simEvents, cpuMs: result.cpuMs } : {}), switchDecisions: result.switchDecisions, lockResets: protocolById(protocol).lockResets === true });
  if (result.costModel) report = { ...report, costModel: result.costModel.name, ...nicCeilingFigures(result.nicLoads ?? {}, result.summary.elapsedNs, result.costModel.nic) };
  if (spec.transactions) report = { ...report, transactions: txnReport(result.history, spec.transactions, result.summary.elapsedNs) };
  if (spec.application && result.application) report = { ...report, application: appReport(spec.application, result.application.log, result.application.check, result.summary.elapsedNs, Object.values(result.verbs).reduce((a, b) => a + b, 0)) };
  if (job.tickMs !== undefined) report = { ...report, timeline: benchTimeline(result.history, job.tickMs) };
  // --racks R (FissLock §5.4): what each rack's switch processed
  if (result.switchPackets && result.switchPackets.length > 1) report = { ...report, switchPackets: result.switchPackets };
  return { report, history: result.history, cutOff: result.cutOff };
}

/** Throughput and latency per fixed tick of the run (bench --tick-ms); too fine a tick for the run is a ConfigError. */
export function benchTimeline(history: History, tickMs: number): BenchTick[] {
  const events = [...history];
  const first = events.reduce((min, e) => Math.min(min, e.timeNs), Number.POSITIVE_INFINITY);
  const last = events.reduce((max, e) => Math.max(max, e.timeNs), Number.NEGATIVE_INFINITY);
  if (events.length > 0 && (last - first) / (tickMs * 1e6) > MAX_TIMELINE_BUCKETS) {
    throw new ConfigError([`--tick-ms ${tickMs}: the run lasted ${((last - first) / 1e6).toFixed(1)} ms, more than ${MAX_TIMELINE_BUCKETS} ticks`]);
  }
  const timeline = timelineFromHistory(events, { bucketMs: tickMs });
  return timeline.buckets.map((b) => ({
    startMs: (b.startNs - timeline.startNs) / 1e6,
    throughput: b.throughput,
    acquires: b.ok,
    failed: b.failed,
    ...(b.p50Us !== undefined ? { p50Us: b.p50Us } : {}),
    ...(b.p99Us !== undefined ? { p99Us: b.p99Us } : {}),
  }));
}
