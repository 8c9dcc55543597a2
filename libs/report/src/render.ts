import { renderCharts } from './charts.js';
import type { ChartSvg } from './charts.js';
import { escapeMarkup as esc } from './escape.js';
import type { FaultReport, FaultWindow } from './model.js';
import { STYLE } from './page.js';

export interface RenderedFaultReport {
  /** A self-contained page: inline styles and SVGs, no scripts, nothing fetched when viewed. */
  readonly html: string;
  readonly svgs: ChartSvg[];
}


const seconds = (report: FaultReport, timeNs: number): string => ((timeNs - report.startNs) / 1e9).toFixed(3);

function badge(label: string, value: string): string {
  return `<div class="badge ${esc(value)}"><small>${esc(label)}</small>${esc(value)}</div>`;
}

function faultRow(report: FaultReport, fault: FaultWindow): string {
  const cells = [
    `<td>${esc(fault.id)}</td>`,
    `<td>${esc(fault.kind)}</td>`,
    `<td>${esc(fault.target)}</td>`,
    `<td class="num">${seconds(report, fault.startNs)}</td>`,
    `<td class="num">${fault.endNs === undefined ? 'open' : seconds(report, fault.endNs)}</td>`,
    `<td class="num">${fault.recoveryMs === undefined ? '–' : esc(`${fault.recoveryMs} ms`)}</td>`,
    `<td>${esc(fault.note ?? '')}</td>`,
  ];
  return `<tr class="fault">${cells.join('')}</tr>`;
}

function faultTable(report: FaultReport): string {
  if (report.faults.length === 0) return '<p class="none">No faults were injected.</p>';
  const head = '<tr><th>id</th><th>kind</th><th>target</th><th class="num">start (s)</th><th class="num">end (s)</th><th class="num">recovery</th><th>note</th></tr>';
  return `<table id="faults"><thead>${head}</thead><tbody>${report.faults.map((f) => faultRow(report, f)).join('')}</tbody></table>`;
}

function failureTable(failuresByCode: Readonly<Record<string, number>>): string {
  const rows = Object.entries(failuresByCode).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  if (rows.length === 0) return '<p class="none">No operation failed.</p>';
  const body = rows.map(([code, n]) => `<tr><td><code>${esc(code)}</code></td><td class="num">${n}</td></tr>`).join('');
  return `<table id="failures"><thead><tr><th>error code</th><th class="num">failures</th></tr></thead><tbody>${body}</tbody></table>`;
}

/**
 * Renders a run report: header, verdict (safety, then liveness), throughput and latency plots with
 * the fault windows shaded, the fault table, unknown operations and failures by code. Every string
 * from the report is escaped; the SVGs come from Vega, which escapes its text itself.
 */
export async function renderFaultReport(report: FaultReport): Promise<RenderedFaultReport> {
  const svgs = await renderCharts(report);
  const run: [string, string][] = [
    ['protocol', report.protocol],
    ['substrate', report.substrate],
    ['seed', String(report.seed)],
    ['duration', `${((report.endNs - report.startNs) / 1e9).toFixed(3)} s (buckets of ${report.bucketMs} ms)`],
  ];
  const runList = run.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('');
  const command = report.command === undefined ? '' : `<dt>command</dt><dd><code>${esc(report.command)}</code></dd>`;
  const lines = report.verdict.lines.map((l) => `<li>${esc(l)}</li>`).join('');
  const figures = svgs.map((s) => `<figure class="plot" id="plot-${esc(s.name)}">${s.svg}</figure>`).join('\n');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(report.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${esc(report.title)}</h1>
<dl class="run">${runList}${command}</dl>
</header>
<section id="verdict">
<div class="verdict">${badge('safety', report.verdict.safety)}${badge('liveness', report.verdict.liveness)}</div>
<p>exit code <code>${esc(String(report.verdict.exitCode))}</code></p>
${lines ? `<ul class="verdict-lines">${lines}</ul>` : ''}
</section>
<section id="timeline">
<h2>Timeline</h2>
${figures}
</section>
<section>
<h2>Faults</h2>
${faultTable(report)}
</section>
<section>
<h2>Failures</h2>
<p>Unknown operations (invoked, outcome never observed): <strong id="unknown-ops">${esc(String(report.unknownOps))}</strong></p>
${failureTable(report.failuresByCode)}
</section>
</body>
</html>
`;
  return { html, svgs };
}
