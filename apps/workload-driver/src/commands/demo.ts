import { availableProtocols } from '@lockfabric/lock-catalog';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { findNatsServer } from '../cluster/nats-binary.js';
import { runInMemory } from '../run/in-memory.js';
import { runLive } from '../run/live.js';
import { liveOptions } from '../run/live-defaults.js';
import { benchReport, formatVerbs } from '../report/bench-report.js';
import type { BenchReport } from '../report/bench-report.js';
import { ProgressBar } from '../report/progress.js';
import { renderTable } from '../report/table.js';
import { DEFAULT_CLUSTER_DIR, acquireLiveCluster, output } from './context.js';
import { measureTransport } from './transport.js';
import type { TransportFigures } from './transport.js';
import type { WorkloadSpec } from '@lockfabric/workloads';

export const DEMO_HELP = `lockfabric demo — bring up a local cluster, run a short workload per protocol, compare

  Live (real NATS, gRPC and one process per service) when nats-server is on PATH or NATS_URL is
  set; otherwise everything runs embedded in this process. Override with --substrate.
  --substrate S     live | embedded | sim
  --operations N    acquires per protocol (default 4000)
  --json            print one JSON object`;

export async function demoCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('demo', argv, { substrate: { type: 'string' }, operations: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values['help']) return (console.log(DEMO_HELP), 0);
  const reader = new FlagReader(values);
  const operations = reader.number('operations', 4_000, { integer: true, min: 1 });
  const liveAvailable = Boolean(process.env['NATS_URL']) || findNatsServer() !== undefined;
  const substrate = reader.string('substrate', liveAvailable ? 'live' : 'embedded');
  if (!['live', 'embedded', 'sim'].includes(substrate)) reader.problems.push(`--substrate: expected live, embedded or sim, got ${JSON.stringify(substrate)}`);
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
  const protocols = availableProtocols().filter((p) => p.fabric === 'verbs');
  const reports: BenchReport[] = [];
  let transport: TransportFigures | undefined;
  if (substrate === 'live') {
    const cluster = await acquireLiveCluster(DEFAULT_CLUSTER_DIR, out);
    try {
      out.note('measuring the raw transport for comparison…');
      transport = await measureTransport(5_000, cluster.state.natsUrl);
      for (const protocol of protocols) {
        const bar = new ProgressBar(protocol.id.padEnd(12), { enabled: !out.json });
        const start = performance.now();
        // A node lost mid-demo costs its clients' figures, not the whole comparison.
        const result = await runLive({ state: cluster.state, protocol: protocol.id, protocolOptions: liveOptions(protocol.id), spec, onProgress: (f) => bar.update(f), tolerateNodeFailures: true });
        bar.done();
        for (const f of result.failedNodes) out.note(`warning: ${protocol.id}: ${f.error}`);
        reports.push(benchReport({ protocol: protocol.id, substrate: 'live', summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: performance.now() - start }));
      }
    } finally {
      await cluster.release();
    }
  } else {
    for (const protocol of protocols) {
      const bar = new ProgressBar(protocol.id.padEnd(12), { enabled: !out.json });
      const result = await runInMemory({ substrate: substrate as 'sim' | 'embedded', protocol: protocol.id, spec, onProgress: (f) => bar.update(f) });
      bar.done();
      reports.push(benchReport({ protocol: protocol.id, substrate: result.substrate, summary: result.summary, accounting: result.accounting, verdict: result.verdict, wallMs: result.wallMs }));
    }
  }
  if (out.json) {
    console.log(JSON.stringify({ substrate, workload: { ...spec, distribution: 'zipf:0.9' }, transport, results: reports }));
  } else {
    console.log(`\nworkload: ${spec.clients} clients, ${spec.locks} locks, zipf 0.9, 50% shared, ${operations} acquires, 1 µs critical section`);
    console.log(
      renderTable(
        ['protocol', 'ops/s', 'p50 µs', 'p99 µs', 'verbs/acquire', 'verbs/release', 'failures', 'checker'],
        reports.map((r) => [r.protocol, Math.round(r.throughput), round2(r.latencyUs.p50), round2(r.latencyUs.p99), formatVerbs(r.verbsPerAcquire), formatVerbs(r.verbsPerRelease), r.failures, r.violations === 0 && r.livenessViolations === 0 ? 'ok' : `${r.violations} violations`]),
      ),
    );
    if (transport) console.log(`\nraw transport on this machine: gRPC stream round trip ${transport.grpcRttUs.toFixed(1)} µs, NATS round trip ${transport.natsRttUs.toFixed(1)} µs`);
  }
  return reports.some((r) => r.violations > 0) ? 1 : 0;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
