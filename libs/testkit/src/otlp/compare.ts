import { OTLP_TEMPORALITY_CUMULATIVE } from './metrics.js';
import type { ReceivedMetric } from './metrics.js';
import type { OtlpAttributes } from './values.js';

type SnapshotLabels = Readonly<Record<string, string>>;
interface NumberSeries {
  readonly labels: SnapshotLabels;
  readonly value: number;
}
interface HistogramSeries {
  readonly labels: SnapshotLabels;
  readonly counts: readonly number[];
  readonly sum: number;
  readonly count: number;
}

/**
 * What a registry snapshot says of one metric: the shape of `MetricsRegistry.snapshot()` in
 * @lockfabric/telemetry, restated here so that test support does not depend on that library.
 */
export type MetricSnapshot =
  | { readonly type: 'counter' | 'gauge'; readonly name: string; readonly help: string; readonly series: readonly NumberSeries[] }
  | { readonly type: 'histogram'; readonly name: string; readonly help: string; readonly bounds: readonly number[]; readonly series: readonly HistogramSeries[] };

/**
 * Differences between a registry snapshot and the metrics one OTLP export delivered, one line
 * each (empty when they agree): every metric and series must arrive with the right kind
 * (monotonic cumulative sum, gauge, cumulative histogram), exactly its labels as attributes, its
 * value, and for histograms the same bounds, per-bucket counts, count and sum. Metrics that
 * arrived but are not in the snapshot are differences too; metrics without series need not arrive.
 */
export function compareMetricsExport(snapshot: readonly MetricSnapshot[], received: readonly ReceivedMetric[]): string[] {
  const issues: string[] = [];
  const byName = new Map<string, ReceivedMetric>();
  for (const metric of received) {
    if (byName.has(metric.name)) issues.push(`${metric.name}: arrived more than once in one export`);
    byName.set(metric.name, metric);
  }
  for (const expected of snapshot) {
    const got = byName.get(expected.name);
    byName.delete(expected.name);
    if (!got) {
      // A metric without series is not exported.
      if (expected.series.length > 0) issues.push(`${expected.name}: missing`);
      continue;
    }
    if (got.description !== expected.help) issues.push(`${expected.name}: description '${got.description}', expected '${expected.help}'`);
    switch (expected.type) {
      case 'counter':
        if (got.kind !== 'sum') {
          issues.push(`${expected.name}: arrived as ${got.kind}, expected a sum`);
          break;
        }
        if (!got.isMonotonic) issues.push(`${expected.name}: sum is not monotonic`);
        if (got.temporality !== OTLP_TEMPORALITY_CUMULATIVE) issues.push(`${expected.name}: temporality ${got.temporality}, expected cumulative`);
        compareSeries(expected.name, expected.series, got.points, (want, point) => (point.value === want.value ? [] : [`value ${String(point.value)}, expected ${want.value}`]), issues);
        break;
      case 'gauge':
        if (got.kind !== 'gauge') {
          issues.push(`${expected.name}: arrived as ${got.kind}, expected a gauge`);
          break;
        }
        compareSeries(expected.name, expected.series, got.points, (want, point) => (point.value === want.value ? [] : [`value ${String(point.value)}, expected ${want.value}`]), issues);
        break;
      case 'histogram':
        if (got.kind !== 'histogram') {
          issues.push(`${expected.name}: arrived as ${got.kind}, expected a histogram`);
          break;
        }
        if (got.temporality !== OTLP_TEMPORALITY_CUMULATIVE) issues.push(`${expected.name}: temporality ${got.temporality}, expected cumulative`);
        compareSeries(
          expected.name,
          expected.series,
          got.points,
          (want, point) => {
            const problems: string[] = [];
            if (!sameNumbers(point.explicitBounds, expected.bounds)) problems.push(`bounds [${point.explicitBounds.join(', ')}], expected [${expected.bounds.join(', ')}]`);
            if (!sameNumbers(point.bucketCounts, want.counts)) problems.push(`bucket counts [${point.bucketCounts.join(', ')}], expected [${want.counts.join(', ')}]`);
            if (point.count !== want.count) problems.push(`count ${point.count}, expected ${want.count}`);
            if (point.sum !== want.sum) problems.push(`sum ${String(point.sum)}, expected ${want.sum}`);
            return problems;
          },
          issues,
        );
        break;
    }
  }
  for (const name of byName.keys()) issues.push(`${name}: arrived but is not in the registry`);
  return issues;
}

function compareSeries<W extends { readonly labels: SnapshotLabels }, P extends { readonly attributes: OtlpAttributes }>(
  name: string,
  wanted: readonly W[],
  points: readonly P[],
  check: (want: W, point: P) => string[],
  issues: string[],
): void {
  const unmatched = [...points];
  for (const want of wanted) {
    const index = unmatched.findIndex((point) => sameLabels(point.attributes, want.labels));
    const where = `${name}${JSON.stringify(want.labels)}`;
    if (index === -1) {
      issues.push(`${where}: no data point with exactly these attributes`);
      continue;
    }
    const [point] = unmatched.splice(index, 1);
    for (const problem of check(want, point as P)) issues.push(`${where}: ${problem}`);
  }
  for (const point of unmatched) issues.push(`${name}: unexpected data point with attributes ${JSON.stringify(point.attributes)}`);
}

function sameLabels(attributes: OtlpAttributes, labels: SnapshotLabels): boolean {
  const keys = Object.keys(attributes);
  return keys.length === Object.keys(labels).length && keys.every((key) => attributes[key] === labels[key]);
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
