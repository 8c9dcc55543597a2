import { renderSpecToSvg, renameClipIds } from './vega.js';
import type { TopLevelSpec } from 'vega-lite';
import type { FaultReport, FaultWindow } from './model.js';

export interface ChartSvg {
  /** File stem, e.g. `throughput` (written as `throughput.svg`). */
  readonly name: string;
  readonly svg: string;
}

const WIDTH_PX = 760;
const HEIGHT_PX = 240;
const FAULT_COLOR = '#d62728';
const LABEL_ROWS = 4;
const LABEL_ROW_PX = 13;

/** The label drawn on a fault window's shading: kind, then target. */
export function faultLabel(fault: FaultWindow): string {
  return `${fault.kind} ${fault.target}`;
}

const secondsSince = (startNs: number, timeNs: number): number => (timeNs - startNs) / 1e9;

/** Fault windows in plot coordinates; an open window runs to the end of the report. */
function faultRows(report: FaultReport, durationS: number): Record<string, number | string>[] {
  return report.faults.map((fault, i) => {
    const startS = secondsSince(report.startNs, fault.startNs);
    const endS = secondsSince(report.startNs, fault.endNs ?? report.endNs);
    return {
      startS,
      endS: Math.max(endS, startS),
      // Keep the label inside the plot even when the window starts before the run.
      labelS: Math.min(Math.max(startS, 0), durationS),
      labelPx: 2 + (i % LABEL_ROWS) * LABEL_ROW_PX,
      label: faultLabel(fault),
    };
  });
}

/** Shaded fault windows plus their labels, as layers on a time axis in seconds. */
function faultLayers(report: FaultReport, xDomain: [number, number]): TopLevelSpec[] {
  const values = faultRows(report, xDomain[1]);
  const x = { type: 'quantitative', title: 'time since start (s)', scale: { domain: xDomain } } as const;
  return [
    {
      data: { values },
      mark: { type: 'rect', color: FAULT_COLOR, opacity: 0.14, clip: true },
      encoding: { x: { ...x, field: 'startS' }, x2: { field: 'endS' } },
    },
    {
      data: { values },
      mark: { type: 'rule', color: FAULT_COLOR, strokeDash: [4, 3], clip: true },
      encoding: { x: { ...x, field: 'startS' } },
    },
    {
      data: { values },
      mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, color: '#7f1d1d', fontSize: 11 },
      encoding: {
        x: { ...x, field: 'labelS' },
        // Pixel rows, so that labels of overlapping windows do not print over each other.
        y: { field: 'labelPx', type: 'quantitative', scale: null },
        text: { field: 'label', type: 'nominal' },
      },
    },
  ] as TopLevelSpec[];
}

/** The time axis (s since start) shared by every layer; the data layer gets its encoding from `x`. */
interface TimeAxis {
  readonly field: 'tS';
  readonly type: 'quantitative';
  readonly title: string;
  readonly scale: { readonly domain: [number, number] };
}

function chartSpec(report: FaultReport, title: string, dataLayer: (x: TimeAxis) => TopLevelSpec): TopLevelSpec {
  const xDomain: [number, number] = [0, Math.max(secondsSince(report.startNs, report.endNs), 1e-9)];
  const x: TimeAxis = { field: 'tS', type: 'quantitative', title: 'time since start (s)', scale: { domain: xDomain } };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: WIDTH_PX,
    height: HEIGHT_PX,
    background: 'white',
    config: { font: 'system-ui, sans-serif', axis: { labelFontSize: 11, titleFontSize: 12 } },
    layer: [...faultLayers(report, xDomain), dataLayer(x)],
    resolve: { scale: { y: 'independent' } },
  } as TopLevelSpec;
}

/** Bucket midpoints in seconds since the run started. */
function midpointS(report: FaultReport, bucketStartNs: number, bucketEndNs: number | undefined): number {
  const endNs = bucketEndNs ?? Math.min(report.endNs, bucketStartNs + report.bucketMs * 1e6);
  return secondsSince(report.startNs, (bucketStartNs + Math.max(endNs, bucketStartNs)) / 2);
}

/** Vega-Lite spec of throughput (completed acquires per second) over time, faults shaded. */
export function throughputSpec(report: FaultReport): TopLevelSpec {
  const values = report.buckets.map((b) => ({ tS: midpointS(report, b.startNs, b.endNs), throughput: b.throughput }));
  return chartSpec(report, 'Throughput (completed acquires/s)', (x) => ({
    data: { values },
    mark: { type: 'line', color: '#1f77b4', point: { size: 18 } },
    encoding: { x, y: { field: 'throughput', type: 'quantitative', title: 'acquires/s' } },
  }) as TopLevelSpec);
}

/** Vega-Lite spec of acquire latency p50 and p99 over time, faults shaded; buckets without samples are left out. */
export function latencySpec(report: FaultReport): TopLevelSpec {
  const values: { tS: number; percentile: string; us: number }[] = [];
  for (const b of report.buckets) {
    const tS = midpointS(report, b.startNs, b.endNs);
    if (b.p50Us !== undefined) values.push({ tS, percentile: 'p50', us: b.p50Us });
    if (b.p99Us !== undefined) values.push({ tS, percentile: 'p99', us: b.p99Us });
  }
  return chartSpec(report, 'Acquire latency (µs)', (x) => ({
    data: { values },
    mark: { type: 'line', point: { size: 18 } },
    encoding: {
      x,
      y: { field: 'us', type: 'quantitative', title: 'latency (µs)' },
      color: { field: 'percentile', type: 'nominal', scale: { domain: ['p50', 'p99'], range: ['#1f77b4', '#ff7f0e'] }, title: null },
    },
  }) as TopLevelSpec);
}

/** The report's plots as SVG: `throughput` and `latency`. */
export async function renderCharts(report: FaultReport): Promise<ChartSvg[]> {
  const charts: [string, TopLevelSpec][] = [
    ['throughput', throughputSpec(report)],
    ['latency', latencySpec(report)],
  ];
  const out: ChartSvg[] = [];
  for (const [name, spec] of charts) out.push({ name, svg: renameClipIds(await renderSpecToSvg(spec), name) });
  return out;
}
