import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderReport } from './load.js';
import type { AnyReport } from './load.js';
import type { FaultReport } from './model.js';
import { renderFaultReport } from './render.js';
import type { RenderedReport } from './rendered.js';

export interface WrittenReport {
  readonly html: string;
  readonly json: string;
  readonly svgs: readonly string[];
}
/** Kept for the nemesis command's callers. */
export type WrittenFaultReport = WrittenReport;

/**
 * Writes `report.html`, one `<name>.svg` per plot and, unless `json` is false, `report.json`
 * (`saved`, the source of truth) into `dir`; returns their paths.
 */
export async function writeRendered(rendered: RenderedReport, saved: unknown, dir: string, options: { json?: boolean } = {}): Promise<WrittenReport> {
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  if (options.json ?? true) await writeFile(json, JSON.stringify(saved, null, 2) + '\n');
  const svgs: string[] = [];
  for (const { name, svg } of rendered.svgs) {
    const path = join(dir, `${name}.svg`);
    await writeFile(path, svg);
    svgs.push(path);
  }
  await writeFile(html, rendered.html);
  return { html, json, svgs };
}

/** A nemesis run's report; report.json carries `kind: 'nemesis'` so `lockfabric report` knows it. */
export async function writeFaultReport(report: FaultReport, dir: string): Promise<WrittenReport> {
  return writeRendered(await renderFaultReport(report), { kind: 'nemesis', version: 1, ...report }, dir);
}

/** Any report kind: renders it and writes it with its JSON. */
export async function writeReport(report: AnyReport, dir: string, options: { json?: boolean } = {}): Promise<WrittenReport> {
  const saved = report.kind === 'nemesis' ? { kind: 'nemesis', version: 1, ...report.report } : report;
  return writeRendered(await renderReport(report), saved, dir, options);
}
