// The text claims table `lockfabric reproduce` prints on stdout.
import { renderTable } from '../report/table.js';
import type { Claim, ExperimentResult, ReproduceResult } from './contract.js';

const number = (value: number, unit: string): string => (Number.isFinite(value) ? `${value.toFixed(Math.abs(value) >= 100 ? 0 : 2)}${unit === '×' ? '×' : ` ${unit}`}` : 'n/a');

export function claimsTable(result: ReproduceResult): string {
  const rows: string[][] = [];
  const notes: string[] = [];
  for (const paper of result.papers) {
    for (const experiment of paper.experiments) {
      for (const claim of experiment.claims) {
        rows.push([paper.paper, experiment.figure, claim.text, number(claim.paper, claim.unit), number(claim.ours, claim.unit), ratioText(claim), claim.verdict]);
        if (claim.note) notes.push(`${experiment.id} ${claim.id}: ${claim.note}`);
      }
      const skipped = experiment.params['skipped'];
      if (typeof skipped === 'string') notes.push(`${experiment.id}: skipped ${skipped}`);
    }
  }
  const table = renderTable(['paper', 'figure', 'claim', "paper's", 'ours', 'ours/paper', 'verdict'], rows);
  const counts = ['reproduced', 'same-direction', 'opposite'].map((v) => `${rows.filter((r) => r[6] === v).length} ${v}`).join(', ');
  return [table, '', `${rows.length} claims: ${counts} (reproduced = same direction and within ±25 % of the paper)${result.costModel ? `; sim cost model ${result.costModel}` : ''}`, ...(notes.length > 0 ? ['', 'notes:', ...notes.map((n) => `  ${n}`)] : [])].join('\n');
}

function ratioText(claim: Claim): string {
  return Number.isFinite(claim.deviation) ? (claim.deviation + 1).toFixed(2) : 'n/a';
}

/**
 * Our measured points as text (`reproduce --table`): experiments of one paper that plot the same
 * series at the same x (different figures of the same runs) share one table, a column per figure.
 */
export function seriesTables(result: ReproduceResult): string {
  const blocks: string[] = [];
  for (const paper of result.papers) {
    const groups = new Map<string, ExperimentResult[]>();
    for (const e of paper.experiments) {
      const key = JSON.stringify([e.x.field, e.series.map((s) => [s.name, s.points.map((p) => p.x)])]);
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    for (const group of groups.values()) {
      const first = group[0]!;
      const rows = first.series.flatMap((s) =>
        s.points.map((pt) => [s.name, pt.x, ...group.map((e) => e.series.find((o) => o.name === s.name)?.points.find((p) => p.x === pt.x)?.y ?? NaN)]),
      );
      blocks.push(`${group.map((e) => e.id).join(', ')} (${first.title})\n${renderTable(['series', first.x.label, ...group.map((e) => e.y.label)], rows)}`);
    }
  }
  return blocks.join('\n\n');
}
