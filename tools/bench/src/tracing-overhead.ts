// Overhead of tracing on live throughput, measured in one invocation on this machine:
//   node tools/bench/dist/tracing-overhead.js [--protocol caslock] [--operations 20000] [--clients 32] [--rounds 1] [--out FILE]
// For each setting — tracing off, 1% head sampling, 100%, and 1% with the slow-acquisition tail
// rule pushed out of reach — it starts a fresh local cluster whose
// services get that setting through the environment (OTEL_EXPORTER_OTLP_ENDPOINT,
// LOCKFABRIC_TRACE_RATIO; the slow/failure tail rule stays at its default), runs a warm-up and
// then the measured workload, and stops the cluster. Spans go to a minimal OTLP/HTTP sink in this
// process that answers every export with success and counts requests and bytes, so export cost is
// real but no Jaeger runs on the same two cores. Rounds interleave the settings to spread drift,
// and each setting's figure is the median of its rounds.
// Prints a table and writes bench-results/tracing-overhead.json (or --out).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { repoRootForBench, runLive, startLocalCluster, stopLocalCluster } from '@lockfabric/workload-driver';

const { values } = parseArgs({
  options: {
    protocol: { type: 'string', default: 'caslock' },
    operations: { type: 'string', default: '20000' },
    clients: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '1' },
    out: { type: 'string' },
  },
});
const protocol = values.protocol ?? 'caslock';
const operations = positive('operations', values.operations);
const clients = positive('clients', values.clients);
const rounds = positive('rounds', values.rounds);
const root = repoRootForBench();
const outFile = values.out ?? join(root, 'bench-results', 'tracing-overhead.json');
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Setting {
  readonly name: string;
  readonly ratio: number | undefined;
  /** LOCKFABRIC_TRACE_SLOW_MS; unset keeps the default (10 ms). */
  readonly slowMs?: number;
}
// The fourth row separates the cost of head sampling from that of the slow-acquisition tail rule,
// which on a loaded machine keeps every acquire slower than 10 ms whatever the ratio.
const SETTINGS: readonly Setting[] = [
  { name: 'off', ratio: undefined },
  { name: '1%', ratio: 0.01 },
  { name: '100%', ratio: 1 },
  { name: '1%-notail', ratio: 0.01, slowMs: 3_600_000 },
];

// Low contention (many locks) so the figure is the cost of tracing, not of waiting.
const spec: WorkloadSpec = { clients, locks: 100_000, readRatio: 0, distribution: 'uniform', operations, thinkNs: 0, criticalSectionNs: 0, seed: 1 };
const warmup: WorkloadSpec = { ...spec, operations: Math.min(2_000, operations), seed: 2 };

const sink = await startSink();
const runs: { setting: string; round: number; opsPerSec: number; acquires: number; failures: number; exportRequests: number; exportBytes: number }[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const setting of SETTINGS) {
      log(`round ${round}: tracing ${setting.name}…`);
      const env: Record<string, string> =
        setting.ratio === undefined
          ? { OTEL_TRACES_EXPORTER: 'none' }
          : {
              OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
              LOCKFABRIC_TRACE_RATIO: String(setting.ratio),
              OTEL_BSP_SCHEDULE_DELAY: '500',
              ...(setting.slowMs !== undefined ? { LOCKFABRIC_TRACE_SLOW_MS: String(setting.slowMs) } : {}),
            };
      const dir = join(root, '.lockfabric', `tracing-overhead-${process.pid}`);
      const state = await startLocalCluster({ dir, lockCount: 131_072, clientsPerComputeNode: 256, withSwitch: false, withCoordinator: false, env });
      try {
        await runLive({ state, protocol, spec: warmup, recordHistory: false });
        const before = sink.counts();
        const result = await runLive({ state, protocol, spec, recordHistory: false });
        // Let the batch processors flush what the run produced before counting.
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        const after = sink.counts();
        runs.push({
          setting: setting.name,
          round,
          opsPerSec: result.summary.throughput,
          acquires: result.summary.acquires,
          failures: result.summary.acquireFailures,
          exportRequests: after.requests - before.requests,
          exportBytes: after.bytes - before.bytes,
        });
        log(`  ${Math.round(result.summary.throughput)} ops/s, ${after.requests - before.requests} OTLP exports (${((after.bytes - before.bytes) / 1e6).toFixed(2)} MB)`);
      } finally {
        await stopLocalCluster(dir);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
} finally {
  await sink.close();
}

const summary = SETTINGS.map((setting) => {
  const mine = runs.filter((r) => r.setting === setting.name);
  // The median of the rounds: one round disturbed by other load on the machine does not move it.
  const opsPerSec = median(mine.map((r) => r.opsPerSec));
  return { setting: setting.name, ratio: setting.ratio ?? null, slowMs: setting.slowMs ?? null, opsPerSec, exportBytesPerOp: mine.reduce((s, r) => s + r.exportBytes / Math.max(1, r.acquires), 0) / mine.length };
});
const off = summary[0]!.opsPerSec;
const table = summary.map((s) => ({ ...s, relativeToOff: s.opsPerSec / off, overheadPercent: (1 - s.opsPerSec / off) * 100 }));
const figures = {
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString() },
  protocol,
  workload: spec,
  rounds,
  loadAverage: (await import('node:os')).loadavg(),
  tailRule: 'acquisitions slower than LOCKFABRIC_TRACE_SLOW_MS (default 10 ms) and failures are kept at every ratio',
  sink: 'in-process OTLP/HTTP sink (accepts and counts, does not decode)',
  table,
  runs,
};
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(figures, null, 2)}\n`);
console.log(`tracing overhead, ${protocol}, ${clients} clients, ${operations} operations per run, ${rounds} round(s), ${figures.machine.cpus} cores`);
console.log('setting      ops/s     vs off   export bytes/op');
for (const row of table) console.log(`${row.setting.padEnd(12)} ${Math.round(row.opsPerSec).toString().padStart(7)}  ${(row.relativeToOff * 100).toFixed(1).padStart(6)}%  ${row.exportBytesPerOp.toFixed(0).padStart(8)}`);
console.log(`written to ${outFile}`);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function positive(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    console.error(`--${name}: expected a positive integer, got '${String(raw)}'`);
    process.exit(2);
  }
  return value;
}

/** Accepts OTLP/HTTP exports (any body) with an empty success response, counting them. */
async function startSink(): Promise<{ endpoint: string; counts(): { requests: number; bytes: number }; close(): Promise<void> }> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on('data', (chunk: Buffer) => (bytes += chunk.length));
    request.on('end', () => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/x-protobuf' });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts: () => ({ requests, bytes }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
