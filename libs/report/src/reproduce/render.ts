import type { TopLevelSpec } from 'vega-lite';
import { escapeMarkup as esc } from '../escape.js';
import { htmlPage, htmlTable } from '../page.js';
import type { RenderedReport } from '../rendered.js';
import { renderNamedSpecs } from '../vega.js';
import type { Claim, ClaimVerdict, ExperimentResult, ReproduceResult } from './model.js';
import { experimentSpec } from './specs.js';

/** A file stem from an experiment id: letters, digits, `-` and `_` only. */
export const plotName = (experiment: ExperimentResult): string => `experiment-${experiment.id.replace(/[^A-Za-z0-9_-]/g, '_')}`;

export function reproduceSpecs(result: ReproduceResult): [string, TopLevelSpec][] {
  return result.papers.flatMap((p) => p.experiments.map((e): [string, TopLevelSpec] => [plotName(e), experimentSpec(e)]));
}

const CLAIM_HEAD = [{ label: 'claim' }, { label: 'paper', num: true }, { label: 'ours', num: true }, { label: 'deviation', num: true }, { label: 'verdict' }, { label: 'note' }];

const value = (n: number, unit: string): string => esc(`${Number.isInteger(n) ? n : n.toPrecision(3)}${unit ? ` ${unit}` : ''}`);

function claimRow(c: Claim): string[] {
  return [
    `<td class="claim-text">${esc(c.text)}</td>`,
    value(c.paper, c.unit),
    value(c.ours, c.unit),
    esc(`${c.deviation >= 0 ? '+' : ''}${(c.deviation * 100).toFixed(0)} %`),
    `<td class="verdict-${esc(c.verdict)}">${esc(c.verdict)}</td>`,
    esc(c.note ?? ''),
  ];
}

function experimentSection(e: ExperimentResult, svg: string | undefined): string {
  const params = Object.entries(e.params).map(([k, v]) => `${k} ${String(v)}`).join(', ');
  const claims = e.claims.length === 0 ? '<p class="none">No claims for this experiment.</p>' : htmlTable(`claims-${e.id}`, CLAIM_HEAD, e.claims.map(claimRow), 'claim');
  return `<section class="experiment" id="experiment-${esc(e.id)}">
<h3>${esc(e.figure)} — ${esc(e.title)}</h3>
<p><code>${esc(e.id)}</code> · ${esc(params)} · ${esc((e.wallMs / 1000).toFixed(1))} s</p>
${e.paperSeries.length === 0 ? '<p class="none">The paper gives no points to overlay.</p>' : ''}
<figure class="plot" id="plot-${esc(plotName(e))}">${svg ?? ''}</figure>
${claims}
</section>`;
}

/** Counts of claims by verdict, in a fixed order. */
export function verdictCounts(result: ReproduceResult): Record<ClaimVerdict, number> {
  const counts: Record<ClaimVerdict, number> = { reproduced: 0, 'same-direction': 0, opposite: 0 };
  for (const p of result.papers) for (const e of p.experiments) for (const c of e.claims) counts[c.verdict]++;
  return counts;
}

/** Renders a reproduction: a summary of verdicts, then per paper and experiment the plot and its claims. */
export async function renderReproduceReport(result: ReproduceResult): Promise<RenderedReport> {
  const svgs = await renderNamedSpecs(reproduceSpecs(result));
  const byName = new Map(svgs.map((s) => [s.name, s.svg]));
  const counts = verdictCounts(result);
  const title = `lockfabric reproduce${result.quick ? ' (quick)' : ''}`;
  const papers = result.papers
    .map((p) => `<section class="paper" id="paper-${esc(p.paper)}">
<h2>${esc(p.title)}</h2>
${p.experiments.map((e) => experimentSection(e, byName.get(plotName(e)))).join('\n')}
</section>`)
    .join('\n');
  const body = `<header>
<h1>${esc(title)}</h1>
<dl class="run"><dt>started</dt><dd>${esc(result.startedAt)}</dd><dt>wall time</dt><dd>${esc((result.wallMs / 1000).toFixed(1))} s</dd><dt>claims</dt><dd id="claim-summary">${esc(`${counts.reproduced} reproduced, ${counts['same-direction']} same direction, ${counts.opposite} opposite`)}</dd></dl>
<p>A claim is reproduced when ours points the same way as the paper's and lies within 25 % of it.</p>
</header>
${papers}`;
  return { html: htmlPage(title, body), svgs };
}
