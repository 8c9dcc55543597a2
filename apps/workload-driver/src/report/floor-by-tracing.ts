import type { BenchReport } from './bench-report.js';

/** One protocol's uncontended ratios at one tracing setting (`bench --trace-ratio off,1%`). */
export interface TracedFloorRow {
  readonly protocol: string;
  /** Head-sampling ratio; 0 with tracing off. */
  readonly ratio: number;
  /** The phase the issue's target is on: acquire+release for the RDMA family, the acquire for switch locks. */
  readonly phase: 'operation' | 'acquire';
  readonly ratioP50: number;
  readonly ratioMean: number;
}

/** The rows of every report that has both a floor and a tracing setting, in report order. */
export function tracedFloorRows(reports: readonly BenchReport[]): TracedFloorRow[] {
  return reports.flatMap((r) => {
    if (!r.floor || !r.tracing) return [];
    const phase = r.floor.operation ? 'operation' : 'acquire';
    const p = r.floor.operation ?? r.floor.acquire;
    return [{ protocol: r.protocol, ratio: r.tracing.ratio, phase, ratioP50: p.ratioP50, ratioMean: p.ratioMean }];
  });
}

/** The table's closing block: each protocol's floor ratios side by side, one column per tracing setting. */
export function describeFloorByTracing(reports: readonly BenchReport[]): string {
  const rows = tracedFloorRows(reports);
  const ratios = [...new Set(rows.map((r) => r.ratio))];
  const label = (ratio: number) => (ratio === 0 ? 'tracing off' : `${+(ratio * 100).toFixed(4)} % sampled`);
  const lines = [`uncontended ratio to the floor, p50 (mean), by tracing: ${ratios.map(label).join(' | ')}`];
  for (const protocol of [...new Set(rows.map((r) => r.protocol))]) {
    const mine = rows.filter((r) => r.protocol === protocol);
    const cells = ratios.map((ratio) => {
      const row = mine.find((r) => r.ratio === ratio);
      return row ? `${row.ratioP50}× (${row.ratioMean}×)` : 'no floor';
    });
    lines.push(`  ${`${protocol} ${mine[0]!.phase === 'operation' ? 'acq+rel' : 'acquire'}`.padEnd(22)}${cells.join(' | ')}`);
  }
  return lines.join('\n');
}
