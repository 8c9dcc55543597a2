import type { TopLevelSpec } from 'vega-lite';
import type { ExperimentResult, Series } from './model.js';

const WIDTH_PX = 640;
const HEIGHT_PX = 300;

/** Where a point comes from: our run, or the paper's figure. */
export type PointSource = 'ours' | 'paper';

interface PlotPoint {
  readonly series: string;
  readonly source: PointSource;
  readonly x: number;
  readonly y: number;
}

/** A log axis cannot place values ≤ 0; those points are dropped rather than drawn at the edge. */
function plotPoints(series: readonly Series[], source: PointSource, xLog: boolean, yLog: boolean): PlotPoint[] {
  return series.flatMap((s) =>
    s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y) && (!xLog || p.x > 0) && (!yLog || p.y > 0)).map((p) => ({ series: s.name, source, x: p.x, y: p.y })),
  );
}

/**
 * One experiment as a line plot: each of our series a solid line with round points, each of the
 * paper's a dashed line with square points, coloured by series name so that ours and the paper's
 * line for the same protocol share a colour. Every (series, source) pair is its own line.
 */
export function experimentSpec(experiment: ExperimentResult): TopLevelSpec {
  const xLog = experiment.x.scale === 'log';
  const yLog = experiment.y.scale === 'log';
  const values = [...plotPoints(experiment.series, 'ours', xLog, yLog), ...plotPoints(experiment.paperSeries, 'paper', xLog, yLog)];
  const names = [...new Set([...experiment.series, ...experiment.paperSeries].map((s) => s.name))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: `${experiment.figure}: ${experiment.title}`, subtitle: 'solid: ours · dashed: the paper' },
    width: WIDTH_PX,
    height: HEIGHT_PX,
    background: 'white',
    config: { font: 'system-ui, sans-serif', axis: { labelFontSize: 11, titleFontSize: 12 } },
    data: { values },
    mark: { type: 'line', point: { size: 40, filled: true } },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: experiment.x.label, scale: xLog ? { type: 'log' } : { type: 'linear', zero: false } },
      y: { field: 'y', type: 'quantitative', title: experiment.y.label, scale: yLog ? { type: 'log' } : { type: 'linear', zero: true } },
      color: { field: 'series', type: 'nominal', sort: names, title: 'series', scale: { scheme: 'tableau10' } },
      strokeDash: { field: 'source', type: 'nominal', scale: { domain: ['ours', 'paper'], range: [[1, 0], [6, 4]] }, title: 'source' },
      shape: { field: 'source', type: 'nominal', scale: { domain: ['ours', 'paper'], range: ['circle', 'square'] }, title: 'source' },
      order: { field: 'x', type: 'quantitative' },
    },
  } as TopLevelSpec;
}
