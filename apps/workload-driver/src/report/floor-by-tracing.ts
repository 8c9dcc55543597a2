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
  /** The median over rounds of each round's ratios, when the floor was measured in rounds: the figure to judge. */
  readonly byRound?: { readonly ratioP50: number; readonly ratioMean: number };
}

/** The rows of every report that has both a floor and a tracing setting, in report order. */
export function tracedFloorRows(reports: readonly BenchReport[]): TracedFloorRow[] {
  return reports.flatMap((r) => {
    if (!r.floor || !r.tracing) return [];
    const phase = r.floor.operation ? 'operation' : 'acquire';
    const p = r.floor.operation ?? r.floor.acquire;
    const byRound = p.roundRatioP50 && p.roundRatioMean ? { byRound: { ratioP50: p.roundRatioP50.median, ratioMean: p.roundRatioMean.median } } : {};
    return [{ protocol: r.protocol, ratio: r.tracing.ratio, phase, ratioP50: p.ratioP50, ratioMean: p.ratioMean, ...byRound }];
  });
}

/** The table's closing block: each protocol's floor ratios side by side, one column per tracing setting. */
export function describeFloorByTracing(reports: readonly BenchReport[]): string {
  const rows = tracedFloorRows(reports);
  const ratios = [...new Set(rows.map((r) => r.ratio))];
  const label = (ratio: number) => (ratio === 0 ? 'tracing off' : `${+(ratio * 100).toFixed(4)} % sampled`);
  const rounds = rows.some((r) => r.byRound);
  const lines = [`uncontended ratio to the floor, ${rounds ? 'median over rounds, ' : ''}p50 (mean), by tracing: ${ratios.map(label).join(' | ')}`];
  for (const protocol of [...new Set(rows.map((r) => r.protocol))]) {
    const mine = rows.filter((r) => r.protocol === protocol);
    const cells = ratios.map((ratio) => {
      const row = mine.find((r) => r.ratio === ratio);
      const shown = row?.byRound ?? row;
      return shown ? `${shown.ratioP50}× (${shown.ratioMean}×)` : 'no floor';
    });
    lines.push(`  ${`${protocol} ${mine[0]!.phase === 'operation' ? 'acq+rel' : 'acquire'}`.padEnd(22)}${cells.join(' | ')}`);
  }
  return lines.join('\n');
}
