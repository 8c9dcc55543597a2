import { escapeMarkup as esc } from '../escape.js';
import { figures, htmlPage, htmlTable } from '../page.js';
import type { RenderedReport } from '../rendered.js';
import { renderNamedSpecs } from '../vega.js';
import { rowVerdict } from './model.js';
import type { ComparisonReport, ComparisonRow, DemoTransactions } from './model.js';
import { goodputBarsSpec, latencyCdfSpec, switchShareSpec, throughputBarsSpec, verbsBarsSpec } from './specs.js';
import type { TopLevelSpec } from 'vega-lite';

const fixed = (n: number, digits: number): string => esc(n.toFixed(digits));

/** The plots of a comparison: CDF, throughput, goodput of transactional runs, verbs, and the switch share when a row has one. */
export function comparisonSpecs(report: ComparisonReport): [string, TopLevelSpec][] {
  const specs: [string, TopLevelSpec][] = [
    ['latency-cdf', latencyCdfSpec(report.results)],
    ['throughput', throughputBarsSpec(report.results)],
    ['verbs', verbsBarsSpec(report.results)],
  ];
  if (report.results.some((r) => r.transactions !== undefined)) specs.splice(2, 0, ['goodput', goodputBarsSpec(report.results)]);
  if (report.results.some((r) => r.switchGrantShare !== undefined)) specs.push(['switch-share', switchShareSpec(report.results)]);
  return specs;
}

function row(r: ComparisonRow): string[] {
  const verdict = rowVerdict(r);
  return [
    esc(r.protocol),
    esc(r.family ?? ''),
    esc(Math.round(r.throughput).toLocaleString('en-US')),
    fixed(r.latencyUs.p50, 1),
    fixed(r.latencyUs.p99, 1),
    // The switch family sends packets, not verbs: a dash, not a misleading 0.
    r.family === 'switch' && r.verbsPerAcquire.total === 0 ? '–' : fixed(r.verbsPerAcquire.total, 2),
    esc(String(r.failures)),
    r.switchGrantShare === undefined ? '–' : esc(`${(r.switchGrantShare * 100).toFixed(1)} %`),
    `<td class="verdict-${esc(verdict)}">${esc(verdict)}</td>`,
  ];
}

const HEAD = [
  { label: 'protocol' },
  { label: 'family' },
  { label: 'ops/s', num: true },
  { label: 'p50 µs', num: true },
  { label: 'p99 µs', num: true },
  { label: 'verbs/acquire', num: true },
  { label: 'failures', num: true },
  { label: 'switch-decided', num: true },
  { label: 'checker' },
];

function header(report: ComparisonReport): { title: string; facts: [string, string][] } {
  if (report.kind === 'demo') {
    const workload = Object.entries(report.workload).map(([k, v]) => `${k} ${String(v)}`).join(', ');
    const facts: [string, string][] = [
      ['substrate', report.substrate],
      ['workload', workload],
    ];
    if (report.transport) {
      const t = report.transport;
      const mean = (value: number | undefined) => (value === undefined ? '' : ` (mean ${value.toFixed(1)})`);
      facts.push(['raw transport', `round trip p50: gRPC stream ${t.grpcRttUs.toFixed(1)} µs${mean(t.grpcRttMeanUs)}, NATS in-CLI request/reply ${t.natsRttUs.toFixed(1)} µs${mean(t.natsRttMeanUs)}`]);
    }
    return { title: `lockfabric demo (${report.substrate})`, facts };
  }
  const substrates = [...new Set(report.results.map((r) => r.substrate))].join(', ');
  return { title: report.title ?? `lockfabric bench: ${report.results.map((r) => r.protocol).join(', ')}`, facts: [['substrate', substrates]] };
}

const TXN_HEAD = [
  { label: 'protocol' },
  { label: 'family' },
  { label: 'committed', num: true },
  { label: 'txn/s', num: true },
  { label: 'p50 µs', num: true },
  { label: 'p99 µs', num: true },
  { label: 'aborts by cause' },
  { label: 'serializable' },
];

/** The demo's transactions section: committed txn/s, latency, aborts by cause and the verdict. */
function transactionsSection(t: DemoTransactions): string {
  const rows = t.results.map((r) => [
    esc(r.protocol),
    esc(r.family ?? ''),
    esc(String(r.committed)),
    esc(Math.round(r.committedPerSec).toLocaleString('en-US')),
    fixed(r.p50Us, 1),
    fixed(r.p99Us, 1),
    esc(r.aborts === 0 ? '0' : Object.entries(r.abortsByCode).map(([k, v]) => `${k} ${v}`).join(', ')),
    `<td class="verdict-${r.verdict === 'violation' ? 'violation' : esc(r.verdict)}">${esc(r.verdict !== 'violation' ? r.verdict : r.serializable ? 'violation' : 'not serializable')}</td>`,
  ]);
  return `<section id="transactions">
<h2>Transactions</h2>
<p>${esc(`${t.workload.toUpperCase()}${t.warehouses !== undefined ? `, ${t.warehouses} warehouse${t.warehouses === 1 ? '' : 's'}` : ''}, ${t.clients} clients, ${t.operations} transactions per protocol, strict two-phase locking. Latency runs from a transaction's first acquire to its last release, retries included; serializable: the committed transactions' precedence graph is acyclic.`)}</p>
${htmlTable('transactions', TXN_HEAD, rows, 'transaction result')}
</section>`;
}

/** Renders a bench or demo report: facts, the comparison table, then the plots. */
export async function renderComparisonReport(report: ComparisonReport): Promise<RenderedReport> {
  const svgs = await renderNamedSpecs(comparisonSpecs(report));
  const { title, facts } = header(report);
  const command = report.kind === 'bench' && report.command ? `<dt>command</dt><dd><code>${esc(report.command)}</code></dd>` : '';
  const body = `<header>
<h1>${esc(title)}</h1>
<dl class="run">${facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`).join('')}${command}</dl>
</header>
<section>
<h2>Results</h2>
${htmlTable('results', HEAD, report.results.map(row), 'result')}
<p>ops/s counts successful acquires only (goodput); the checker column is the history checker's verdict (exclusion, then liveness).</p>
</section>
${report.kind === 'demo' && report.transactions ? transactionsSection(report.transactions) : ''}
<section id="plots">
<h2>Plots</h2>
${figures(svgs)}
</section>`;
  return { html: htmlPage(title, body), svgs };
}
