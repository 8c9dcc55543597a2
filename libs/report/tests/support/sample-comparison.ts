import type { ComparisonRow, DemoRunReport } from '../../src/comparison/model.js';

const NO_VERBS = { read: 0, write: 0, cas: 0, faa: 0, maskedCas: 0, maskedFaa: 0, total: 0 };

/** A CDF rising from `p50Us / 4` to `p50Us * 20` in ten steps. */
function cdf(p50Us: number): { fraction: number; us: number }[] {
  return Array.from({ length: 10 }, (_, i) => ({ fraction: (i + 1) / 10, us: (p50Us / 4) * Math.pow(80, i / 9) }));
}

export function row(protocol: string, family: 'rdma' | 'switch', over: Partial<ComparisonRow> = {}): ComparisonRow {
  const rdma = family === 'rdma';
  return {
    protocol,
    substrate: 'embedded',
    family,
    throughput: 1_000 + protocol.length * 137,
    latencyUs: { p50: 100 + protocol.length, p99: 900 + protocol.length },
    latencyCdfUs: cdf(100 + protocol.length),
    verbsPerAcquire: rdma ? { ...NO_VERBS, read: 1.5, cas: 1, total: 2.5 } : NO_VERBS,
    acquires: 400,
    failures: 0,
    violations: 0,
    livenessViolations: 0,
    checked: true,
    ...(rdma ? {} : { switchGrantShare: protocol === 'fisslock' ? 0.62 : 0 }),
    verdict: 'ok',
    ...over,
  };
}

/** A demo of three RDMA and two switch protocols. */
export function sampleDemo(over: Partial<DemoRunReport> = {}): DemoRunReport {
  return {
    kind: 'demo',
    version: 1,
    substrate: 'embedded',
    workload: { clients: 16, locks: 64, distribution: 'zipf:0.9', readRatio: 0.5 },
    results: [row('caslock', 'rdma'), row('dslr', 'rdma'), row('shiftlock', 'rdma', { verbsPerAcquire: { ...NO_VERBS, read: 0.5, maskedCas: 0.5, maskedFaa: 0.5, total: 1.5 } }), row('fisslock', 'switch'), row('netlock', 'switch')],
    ...over,
  };
}
