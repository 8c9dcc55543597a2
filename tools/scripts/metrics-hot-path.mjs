#!/usr/bin/env node
// Hot-path cost of a metric update: LockFabric's registry (libs/telemetry) against the
// OpenTelemetry metrics SDK, for the updates a lock operation makes (a counter with two labels,
// a latency histogram with one). Reports CPU time per update from process.cpuUsage(), the
// median of several rounds, so other processes on a loaded machine skew it less than wall time
// would. A report, not a test: nothing is asserted.
// Usage: node tools/scripts/metrics-hot-path.mjs [updates-per-round] (needs libs/telemetry built)
import { MetricsRegistry } from '../../libs/telemetry/dist/index.js';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';

const N = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = 7;
const OPS = ['acquire', 'release'];
const OUTCOMES = ['granted', 'retry', 'timeout'];
const BUCKETS = [1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 0.5, 1];

function cpuNsPerUpdate(update) {
  const samples = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < N; i++) update(i);
    const used = process.cpuUsage(start);
    samples.push(((used.user + used.system) * 1000) / N);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(ROUNDS / 2)];
}

const registry = new MetricsRegistry();
const ops = registry.counter({ name: 'bench_ops_total', help: 'ops', labelNames: ['op', 'outcome'] });
const latency = registry.histogram({ name: 'bench_latency_seconds', help: 'latency', labelNames: ['op'], buckets: BUCKETS });

// A reader must be attached or the SDK records nothing; its export interval is far beyond the run.
const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 });
const meter = new MeterProvider({ readers: [reader] }).getMeter('bench');
const sdkOps = meter.createCounter('bench_ops_total');
const sdkLatency = meter.createHistogram('bench_latency_seconds', { advice: { explicitBucketBoundaries: BUCKETS } });

const rows = [
  ['registry counter.inc (2 labels)', (i) => ops.inc({ op: OPS[i & 1], outcome: OUTCOMES[i % 3] })],
  ['sdk counter.add (2 attributes)', (i) => sdkOps.add(1, { op: OPS[i & 1], outcome: OUTCOMES[i % 3] })],
  ['registry histogram.observe (1 label)', (i) => latency.observe({ op: OPS[i & 1] }, (i % 1000) * 1e-5)],
  ['sdk histogram.record (1 attribute)', (i) => sdkLatency.record((i % 1000) * 1e-5, { op: OPS[i & 1] })],
];
console.log(`node ${process.version}, ${N} updates per round, median of ${ROUNDS} rounds, CPU ns per update`);
for (const [name, update] of rows) console.log(`${name.padEnd(40)} ${cpuNsPerUpdate(update).toFixed(0).padStart(6)}`);
await reader.shutdown();
