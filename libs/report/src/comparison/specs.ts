import type { TopLevelSpec } from 'vega-lite';
import type { ComparisonRow } from './model.js';

const WIDTH_PX = 760;
const HEIGHT_PX = 280;
const FAMILY_COLORS = { domain: ['rdma', 'switch'], range: ['#1f77b4', '#ff7f0e'] };

const base = (title: string): Partial<TopLevelSpec> => ({
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title,
  width: WIDTH_PX,
  height: HEIGHT_PX,
  background: 'white',
  config: { font: 'system-ui, sans-serif', axis: { labelFontSize: 11, titleFontSize: 12 } },
});

/** Protocols in the rows' order, so every plot lists them as the table does. */
const protocolOrder = (rows: readonly ComparisonRow[]): string[] => rows.map((r) => r.protocol);

/**
 * Acquire-latency CDF, one step line per protocol that has CDF points, on a log latency axis
 * (the protocols span µs to seconds). Points at 0 µs cannot sit on a log axis and are left out.
 */
export function latencyCdfSpec(rows: readonly ComparisonRow[]): TopLevelSpec {
  const values = rows.flatMap((r) => (r.latencyCdfUs ?? []).filter((p) => p.us > 0).map((p) => ({ protocol: r.protocol, us: p.us, fraction: p.fraction })));
  return {
    ...base('Acquire latency CDF'),
    data: { values },
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.8 },
    encoding: {
      x: { field: 'us', type: 'quantitative', title: 'acquire latency (µs, log)', scale: { type: 'log' } },
      y: { field: 'fraction', type: 'quantitative', title: 'fraction of acquires', scale: { domain: [0, 1] } },
      color: { field: 'protocol', type: 'nominal', sort: protocolOrder(rows), title: 'protocol', scale: { scheme: 'tableau20' } },
    },
  } as TopLevelSpec;
}

/** Throughput (successful acquires/s) per protocol, one bar each, coloured by family. */
export function throughputBarsSpec(rows: readonly ComparisonRow[]): TopLevelSpec {
  const values = rows.map((r) => ({ protocol: r.protocol, family: r.family ?? 'rdma', throughput: r.throughput }));
  return {
    ...base('Throughput (successful acquires/s)'),
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'protocol', type: 'nominal', sort: protocolOrder(rows), title: null, axis: { labelAngle: -30 } },
      y: { field: 'throughput', type: 'quantitative', title: 'acquires/s' },
      color: { field: 'family', type: 'nominal', scale: FAMILY_COLORS, title: 'family' },
    },
  } as TopLevelSpec;
}

const OPCODES = [
  ['read', 'read'],
  ['write', 'write'],
  ['cas', 'cas'],
  ['faa', 'faa'],
  ['maskedCas', 'masked cas'],
  ['maskedFaa', 'masked faa'],
] as const;

/** Verbs per acquire per protocol, stacked by opcode; a protocol with no verbs (switch family) has no bar. */
export function verbsBarsSpec(rows: readonly ComparisonRow[]): TopLevelSpec {
  const values = rows.flatMap((r) => OPCODES.filter(([key]) => r.verbsPerAcquire[key] > 0).map(([key, opcode]) => ({ protocol: r.protocol, opcode, verbs: r.verbsPerAcquire[key] })));
  return {
    ...base('RDMA verbs per acquire, by opcode'),
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'protocol', type: 'nominal', sort: protocolOrder(rows), title: null, axis: { labelAngle: -30 }, scale: { domain: protocolOrder(rows) } },
      y: { field: 'verbs', type: 'quantitative', title: 'verbs per acquire', stack: 'zero' },
      color: { field: 'opcode', type: 'nominal', scale: { domain: OPCODES.map(([, o]) => o) }, title: 'opcode' },
    },
  } as TopLevelSpec;
}

/** Switch family: the share of grants the switch decided itself, one bar per protocol that reports it. */
export function switchShareSpec(rows: readonly ComparisonRow[]): TopLevelSpec {
  const shown = rows.filter((r) => r.switchGrantShare !== undefined);
  const values = shown.map((r) => ({ protocol: r.protocol, share: r.switchGrantShare as number }));
  return {
    ...base('Grants decided in the switch (share of acquires)'),
    height: 180,
    data: { values },
    mark: { type: 'bar', color: FAMILY_COLORS.range[1] },
    encoding: {
      x: { field: 'protocol', type: 'nominal', sort: protocolOrder(shown), title: null, axis: { labelAngle: 0 } },
      y: { field: 'share', type: 'quantitative', title: 'switch-decided share', scale: { domain: [0, 1] }, axis: { format: '%' } },
    },
  } as TopLevelSpec;
}

/** Transactional runs: committed transactions per second per protocol (rows without transactions are left out). */
export function goodputBarsSpec(rows: readonly ComparisonRow[]): TopLevelSpec {
  const shown = rows.filter((r) => r.transactions !== undefined);
  const values = shown.map((r) => ({ protocol: r.protocol, family: r.family ?? 'rdma', committed: r.transactions?.committedPerSec ?? 0 }));
  return {
    ...base(`Goodput (committed ${shown[0]?.transactions?.workload ?? ''} transactions/s)`),
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'protocol', type: 'nominal', sort: protocolOrder(shown), title: null, axis: { labelAngle: -30 } },
      y: { field: 'committed', type: 'quantitative', title: 'transactions/s' },
      color: { field: 'family', type: 'nominal', scale: FAMILY_COLORS, title: 'family' },
    },
  } as TopLevelSpec;
}
