import { ConfigError, errorMessage } from '@lockfabric/ports';
import type { BenchRunReport, DemoRunReport } from './comparison/model.js';
import { renderComparisonReport } from './comparison/render.js';
import type { FaultReport } from './model.js';
import { renderFaultReport } from './render.js';
import type { RenderedReport } from './rendered.js';
import type { ReproduceResult } from './reproduce/model.js';
import { renderReproduceReport } from './reproduce/render.js';
import { benchReportSchema, demoReportSchema, faultReportSchema, issueLines, reproduceResultSchema } from './schema.js';

/** Every report `lockfabric report` re-renders, told apart by `kind`. */
export type AnyReport = { readonly kind: 'nemesis'; readonly report: FaultReport } | BenchRunReport | DemoRunReport | ReproduceResult;

export const REPORT_KINDS = ['nemesis', 'bench', 'demo', 'reproduce'] as const;

const SCHEMAS = { bench: benchReportSchema, demo: demoReportSchema, reproduce: reproduceResultSchema, nemesis: faultReportSchema } as const;

/**
 * Reads a saved report (the text of a report.json) and checks it against its kind's schema.
 * Nemesis reports written before `kind` existed are recognised by their buckets and faults. Any
 * problem — not JSON, unknown kind, missing or mistyped fields — is a ConfigError listing each.
 */
export function parseReport(text: string, source = 'report'): AnyReport {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${source}: not JSON (${errorMessage(error)})`]);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ConfigError([`${source}: expected a JSON object with a "kind" (${REPORT_KINDS.join(', ')})`]);
  const record = json as Record<string, unknown>;
  const kind = record['kind'] ?? (Array.isArray(record['buckets']) && Array.isArray(record['faults']) ? 'nemesis' : undefined);
  if (typeof kind !== 'string' || !(kind in SCHEMAS)) {
    throw new ConfigError([`${source}: unknown report kind ${JSON.stringify(kind ?? null)}; expected one of ${REPORT_KINDS.join(', ')}`]);
  }
  const parsed = SCHEMAS[kind as keyof typeof SCHEMAS].safeParse(json);
  if (!parsed.success) throw new ConfigError(issueLines(parsed.error).map((line) => `${source} (${kind}): ${line}`));
  // The schemas check what the pages read; the object itself is the report as saved.
  return kind === 'nemesis' ? { kind: 'nemesis', report: json as FaultReport } : (json as BenchRunReport | DemoRunReport | ReproduceResult);
}

/** Renders any report to its page and plots. */
export function renderReport(report: AnyReport): Promise<RenderedReport> {
  switch (report.kind) {
    case 'nemesis':
      return renderFaultReport(report.report);
    case 'bench':
    case 'demo':
      return renderComparisonReport(report);
    case 'reproduce':
      return renderReproduceReport(report);
  }
}
