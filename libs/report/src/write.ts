import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FaultReport } from './model.js';
import { renderFaultReport } from './render.js';

export interface WrittenFaultReport {
  readonly html: string;
  readonly json: string;
  readonly svgs: readonly string[];
}

/** Writes `report.html`, `report.json` (the report itself) and one `<name>.svg` per plot into `dir`; returns their paths. */
export async function writeFaultReport(report: FaultReport, dir: string): Promise<WrittenFaultReport> {
  const rendered = await renderFaultReport(report);
  await mkdir(dir, { recursive: true });
  const json = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  await writeFile(json, JSON.stringify(report, null, 2) + '\n');
  const svgs: string[] = [];
  for (const { name, svg } of rendered.svgs) {
    const path = join(dir, `${name}.svg`);
    await writeFile(path, svg);
    svgs.push(path);
  }
  await writeFile(html, rendered.html);
  return { html, json, svgs };
}
