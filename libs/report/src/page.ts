import { escapeMarkup as esc } from './escape.js';

/** The stylesheet every report page inlines (no external CSS, nothing fetched at view time). */
export const STYLE = `
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
td.verdict-reproduced, td.verdict-ok { color: #116329; font-weight: 600; }
td.verdict-same-direction { color: #9a6700; font-weight: 600; }
td.verdict-opposite, td.verdict-violation, td.verdict-liveness { color: #a40e26; font-weight: 600; }
`;

/** A whole self-contained page: inline styles, the given body, no scripts. */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

/** One `<figure class="plot">` per rendered SVG, ids `plot-<name>`. */
export function figures(svgs: readonly { name: string; svg: string }[]): string {
  return svgs.map((s) => `<figure class="plot" id="plot-${esc(s.name)}">${s.svg}</figure>`).join('\n');
}

/** A table with a header row; cells are already-escaped HTML, a `num` column is right-aligned. */
export function htmlTable(id: string, head: readonly { label: string; num?: boolean }[], rows: readonly (readonly string[])[], rowClass = ''): string {
  const th = head.map((h) => `<th${h.num ? ' class="num"' : ''}>${esc(h.label)}</th>`).join('');
  const body = rows.map((r) => `<tr${rowClass ? ` class="${rowClass}"` : ''}>${r.map((c, i) => (head[i]?.num ? `<td class="num">${c}</td>` : c.startsWith('<td') ? c : `<td>${c}</td>`)).join('')}</tr>`).join('');
  return `<table id="${esc(id)}"><thead><tr>${th}</tr></thead><tbody>${body}</tbody></table>`;
}
