import { renderCharts } from './charts.js';
import type { ChartSvg } from './charts.js';
import { escapeMarkup as esc } from './escape.js';
import type { FaultReport, FaultWindow } from './model.js';

export interface RenderedFaultReport {
  /** A self-contained page: inline styles and SVGs, no scripts, nothing fetched when viewed. */
  readonly html: string;
  readonly svgs: ChartSvg[];
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; color: #1f2328; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin: 0 0 .4rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .6rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
dl.run { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: 0; }
dl.run dt { color: #59636e; }
dl.run dd { margin: 0; }
code { font: 12.5px ui-monospace, monospace; background: #f6f8fa; padding: .1rem .3rem; border-radius: 4px; word-break: break-all; }
.verdict { display: flex; gap: 1rem; margin: 1.2rem 0 .5rem; }
.verdict .badge { flex: 1; border-radius: 8px; padding: .8rem 1rem; font-size: 1.25rem; font-weight: 600; border: 2px solid; }
.verdict .badge small { display: block; font-size: .8rem; font-weight: 400; text-transform: uppercase; letter-spacing: .05em; }
.badge.ok { background: #dafbe1; border-color: #1a7f37; color: #116329; }
.badge.violation { background: #ffebe9; border-color: #cf222e; color: #a40e26; }
.badge.unchecked { background: #f6f8fa; border-color: #8c959f; color: #59636e; }
ul.verdict-lines { margin: .4rem 0 0; padding-left: 1.2rem; font: 12.5px ui-monospace, monospace; }
figure { margin: 0 0 1rem; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #d0d7de; vertical-align: top; }
th { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
p.none { color: #59636e; }
`;

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
