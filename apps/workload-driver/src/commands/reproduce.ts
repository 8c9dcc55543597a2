// `lockfabric reproduce`: the papers' experiments on `sim`, our series beside the paper's numbers,
// and a claims table saying which headline claims come out the same way.
import { writeFile } from 'node:fs/promises';
import { FlagReader, parseCommandArgs } from '../cli/args.js';
import { COST_MODEL_FLAGS, COST_MODEL_HELP, readCostModel } from '../cli/cost-model.js';
import { ProgressBar } from '../report/progress.js';
import { claimsTable, seriesTables } from '../reproduce/claims-table.js';
import type { PaperDef, Scale } from '../reproduce/experiment.js';
import { PAPERS } from '../reproduce/papers/index.js';
import { estimateMs, expand, runReproduce } from '../reproduce/runner.js';
import { output } from './context.js';

export const REPRODUCE_HELP = `lockfabric reproduce <fisslock|shiftlock|dslr|declock|alock|all> [flags]
  runs the paper's experiments on sim at its parameters and prints a claims table: the paper's
  number, ours, ours/paper and a verdict (reproduced: same direction and within ±25 %;
  same-direction; opposite), with the mechanism we believe for every claim that is off
  --figure ID      one experiment (e.g. declock-fig12-cs); repeatable
  --quick          fewer points and operations, same shape (all: a few minutes)
  --smoke          the smallest scale, for tests
  --workers N      run points on N threads (this one and N-1 workers); same result for any N (default 1)
  --json           print the ReproduceResult JSON instead of the table
  --table          also print our measured points, one table per set of runs (a column per figure)
  --out FILE       also write the ReproduceResult JSON to FILE (lockfabric report FILE renders it)
  --report DIR     also write report.json, report.html and one SVG per experiment into DIR
  --list           list the experiments and exit
${COST_MODEL_HELP}`;

export async function reproduceCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('reproduce', argv, {
    figure: { type: 'string', multiple: true },
    quick: { type: 'boolean' },
    smoke: { type: 'boolean' },
    workers: { type: 'string' },
    json: { type: 'boolean' },
    out: { type: 'string' },
    report: { type: 'string' },
    list: { type: 'boolean' },
    table: { type: 'boolean' },
    ...COST_MODEL_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (values['help']) return (console.log(REPRODUCE_HELP), 0);
  const reader = new FlagReader(values);
  const positionals = values['_'] as unknown as string[];
  const names = [...PAPERS.map((p) => p.paper), 'all'];
  if (values['list']) {
    for (const p of PAPERS) for (const e of p.experiments) console.log(`${e.id.padEnd(28)} ${e.figure}: ${e.title}`);
    return 0;
  }
  const target = positionals[0];
  if (target === undefined) reader.problems.push(`reproduce: give a paper: ${names.join(', ')}`);
  else if (!names.includes(target)) reader.problems.push(`reproduce: unknown paper ${JSON.stringify(target)}; expected ${names.join(', ')}`);
  if (positionals.length > 1) reader.problems.push(`reproduce: one paper at a time (got ${positionals.join(' ')})`);
  if (values['quick'] && values['smoke']) reader.problems.push('--quick and --smoke: choose one scale');
  const workers = reader.number('workers', 1, { integer: true, min: 1, max: 64 });
  const scale: Scale = values['smoke'] ? 'smoke' : values['quick'] ? 'quick' : 'full';
  let papers: PaperDef[] = PAPERS.filter((p) => target === 'all' || p.paper === target);
  const figures = (values['figure'] as string[] | undefined) ?? [];
  if (figures.length > 0) {
    const known = new Set(papers.flatMap((p) => p.experiments.map((e) => e.id)));
    for (const f of figures) if (!known.has(f)) reader.problems.push(`--figure: no experiment ${JSON.stringify(f)} in ${target ?? 'the papers'} (lockfabric reproduce --list)`);
    papers = papers.map((p) => ({ ...p, experiments: p.experiments.filter((e) => figures.includes(e.id)) })).filter((p) => p.experiments.length > 0);
  }
  const costModel = readCostModel(values, reader);
  reader.done();
  const out = output(values['json'] === true);
  const plan = { papers, scale, workers, costModel };
  const { jobs } = expand(plan);
  out.note(`reproduce ${target}${figures.length ? ` (${figures.join(', ')})` : ''}: ${jobs.length} runs at ${scale} scale on ${workers} worker(s), expected about ${formatDuration(estimateMs(jobs) / Math.min(workers, jobs.length || 1))}`);
  const bar = new ProgressBar(`reproduce ${target}`, { enabled: !out.json });
  const result = await runReproduce(plan, (done, total) => bar.update(done / total, `${done}/${total} runs`));
  bar.done();
  const file = values['out'];
  if (typeof file === 'string') {
    await writeFile(file, JSON.stringify(result, null, 2) + '\n');
    out.note(`written to ${file}`);
  }
  const reportDir = values['report'];
  // the renderer (Vega) only when a report is asked for
  if (typeof reportDir === 'string') out.note(`report: ${(await (await import('@lockfabric/report')).writeReport(result, reportDir)).html}`);
  if (out.json) console.log(JSON.stringify(result));
  else console.log(`${values['table'] ? `${seriesTables(result)}\n\n` : ''}${claimsTable(result)}\n\nwall time ${formatDuration(result.wallMs)}`);
  return 0;
}

function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
