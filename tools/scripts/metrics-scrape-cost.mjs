#!/usr/bin/env node
// CPU cost of one /metrics scrape of a compute node's registry: the registry's own text renderer
// when libs/telemetry still has one (`registry.render()`), and the OpenTelemetry Prometheus
// exporter over the registry as a MetricProducer when it has that (`createPrometheusMetrics`).
// The registry mirrors a compute node's families (libs/service, apps/compute-node) with every
// label combination a node sees after runs of `protocols` verb protocols. CPU time from
// process.cpuUsage(), median of several rounds. A report, not a test: nothing is asserted.
// Usage: node tools/scripts/metrics-scrape-cost.mjs [scrapes-per-round] (needs libs/telemetry built)
import * as telemetry from '../../libs/telemetry/dist/index.js';

const SCRAPES = Number(process.argv[2] ?? 2_000);
const ROUNDS = 7;
const PROTOCOLS = ['caslock', 'dslr', 'dslr-backoff', 'mcs', 'drtm', 'shiftlock', 'declock', 'declock-cql', 'alock', 'rma-rw', 'ncosed', 'sherman'];
const LATENCY_BUCKETS_S = [1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const VERB_BUCKETS = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128];
const OPCODES = ['read', 'write', 'cas', 'faa', 'maskedCas', 'maskedFaa'];

function computeNodeRegistry(protocols) {
  const registry = new telemetry.MetricsRegistry();
  registry.counter({ name: 'lockfabric_grpc_refused_total', help: 'gRPC calls refused by the peer guard, by reason', labelNames: ['reason'] });
  registry.counter({ name: 'lockfabric_nats_permission_violations_total', help: 'NATS publishes and subscriptions refused by the server under this identity' });
  const grant = registry.histogram({ name: 'lockfabric_lock_grant_seconds', help: 'Acquire invoke to grant, granted acquires', labelNames: ['protocol', 'mode'], buckets: LATENCY_BUCKETS_S });
  const wait = registry.histogram({ name: 'lockfabric_lock_wait_seconds', help: 'Time an acquire waited before its outcome, by outcome', labelNames: ['protocol', 'outcome'], buckets: LATENCY_BUCKETS_S });
  const perAcquire = registry.histogram({ name: 'lockfabric_verbs_per_acquire', help: 'Verbs one acquire issued', labelNames: ['protocol'], buckets: VERB_BUCKETS });
  const operations = registry.counter({ name: 'lockfabric_lock_operations_total', help: 'Lock operations by kind and outcome', labelNames: ['protocol', 'operation', 'outcome'] });
  const handovers = registry.counter({ name: 'lockfabric_lock_handovers_total', help: 'Direct handovers to a waiting holder', labelNames: ['protocol'] });
  registry.counter({ name: 'lockfabric_lock_resets_total', help: 'Lock resets done by this node, by reason', labelNames: ['protocol', 'reason'] });
  const verbs = registry.counter({ name: 'lockfabric_compute_verbs_total', help: 'Remote verbs posted by this node, by opcode', labelNames: ['opcode'] });
  registry.counter({ name: 'lockfabric_compute_fenced_requests_total', help: 'Refused work requests', labelNames: ['node'] });
  registry.counter({ name: 'lockfabric_compute_memory_rebinds_total', help: 'Memory-node queue-pair rebinding', labelNames: ['event'] });
  registry.counter({ name: 'lockfabric_compute_rejoins_total', help: 'Rejoins' });
  registry.counter({ name: 'lockfabric_runs_total', help: 'Workload runs completed by this compute node' }).inc(undefined, protocols.length);
  registry.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed input dropped, by source', labelNames: ['source'] });
  let i = 0;
  for (const protocol of protocols) {
    for (const mode of ['exclusive', 'shared']) grant.observe({ protocol, mode }, LATENCY_BUCKETS_S[i++ % LATENCY_BUCKETS_S.length]);
    for (const outcome of ['granted', 'timeout', 'aborted']) {
      wait.observe({ protocol, outcome }, LATENCY_BUCKETS_S[i++ % LATENCY_BUCKETS_S.length]);
      for (const operation of ['acquire', 'release']) operations.inc({ protocol, operation, outcome }, i);
    }
    perAcquire.observe({ protocol }, 3);
    handovers.inc({ protocol });
  }
  for (const opcode of OPCODES) verbs.inc({ opcode }, 1000);
  return registry;
}

async function cpuUsPerScrape(scrape) {
  const samples = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.cpuUsage();
    for (let s = 0; s < SCRAPES; s++) await scrape();
    const used = process.cpuUsage(start);
    samples.push((used.user + used.system) / SCRAPES);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(ROUNDS / 2)];
}

console.log(`node ${process.version}, ${SCRAPES} scrapes per round, median of ${ROUNDS} rounds, CPU µs per scrape`);
for (const count of [1, PROTOCOLS.length]) {
  const registry = computeNodeRegistry(PROTOCOLS.slice(0, count));
  const renderers = [];
  if (typeof registry.render === 'function') renderers.push(['registry.render()', () => registry.render(), undefined]);
  if (typeof telemetry.createPrometheusMetrics === 'function') {
    const prometheus = telemetry.createPrometheusMetrics({ registry });
    renderers.push(['PrometheusExporter over the registry', () => prometheus.render(), () => prometheus.shutdown()]);
  }
  for (const [name, render, close] of renderers) {
    const text = await render();
    const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).length;
    const us = await cpuUsPerScrape(render);
    console.log(`${String(count).padStart(2)} protocol(s), ${String(samples).padStart(4)} samples, ${String(text.length).padStart(6)} bytes  ${name.padEnd(38)} ${us.toFixed(1).padStart(8)}`);
    await close?.();
  }
}
