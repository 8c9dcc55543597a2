import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '@lockfabric/ports';
import { parseReport, writeReport } from '@lockfabric/report';
import { parseCommandArgs } from '../cli/args.js';
import { output } from './context.js';

export const REPORT_HELP = `lockfabric report FILE.json — re-render a saved report as a self-contained HTML page and SVG plots

  FILE.json is a report.json of nemesis, bench --report, demo or reproduce (told apart by its
  "kind"). Writes report.html and one SVG per plot; the page embeds them and loads nothing.
  --out DIR    where to write (default: FILE's folder); FILE is copied there as report.json
  --json       print {kind, html, svgs} instead of the paths`;

export async function reportCommand(argv: readonly string[]): Promise<number> {
  const values = parseCommandArgs('report', argv, { out: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values['help']) return (console.log(REPORT_HELP), 0);
  const files = (values['_'] as string[] | undefined) ?? [];
  if (files.length !== 1) throw new ConfigError([`lockfabric report: expected one FILE.json, got ${files.length === 0 ? 'none' : files.map((f) => JSON.stringify(f)).join(' ')} (see lockfabric report --help)`]);
  const file = files[0] as string;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`]);
  }
  const report = parseReport(text, file);
  const outFlag = values['out'];
  const dir = typeof outFlag === 'string' ? outFlag : dirname(file);
  // Rendering beside the JSON keeps the file as it is; elsewhere the folder gets its own copy.
  const written = await writeReport(report, dir, { json: resolve(dir, 'report.json') !== resolve(file) });
  const out = output(values['json'] === true);
  if (out.json) console.log(JSON.stringify({ kind: report.kind, html: written.html, svgs: written.svgs }));
  else console.log(`${report.kind} report: ${written.html}\nplots: ${written.svgs.join(', ')}`);
  return 0;
}
