import { describe, expect, it } from 'vitest';
import { CLIENTS, sampleExperiment } from '../../tests/support/sample-reproduce.js';
import { countMarks, markPaths } from '../../tests/support/svg-marks.js';
import { renderSpecToSvg } from '../vega.js';
import { experimentSpec } from './specs.js';

describe('experiment plot', () => {
  it('draws one line per series of ours and of the paper, and one point per data point', async () => {
    const e = sampleExperiment();
    const svg = await renderSpecToSvg(experimentSpec(e));
    expect(countMarks(svg, 'mark-line')).toBe(e.series.length + e.paperSeries.length);
    const points = [...e.series, ...e.paperSeries].reduce((n, s) => n + s.points.length, 0);
    expect(countMarks(svg, 'mark-symbol')).toBe(points);
  });

  it('keeps ours and the paper apart when they name the same protocol (dashed vs solid)', async () => {
    const svg = await renderSpecToSvg(experimentSpec(sampleExperiment()));
    const lines = markPaths(svg, 'mark-line');
    expect(lines.filter((p) => p.includes('stroke-dasharray="6,4"'))).toHaveLength(2);
    expect(lines.filter((p) => !p.includes('stroke-dasharray="6,4"'))).toHaveLength(2);
  });

  it('drops points a log axis cannot place (x ≤ 0) and keeps the rest', async () => {
    const e = sampleExperiment({ series: [{ name: 'declock', points: [{ x: 0, y: 1 }, ...CLIENTS.map((x) => ({ x, y: x }))] }], paperSeries: [] });
    const svg = await renderSpecToSvg(experimentSpec(e));
    expect(countMarks(svg, 'mark-symbol')).toBe(CLIENTS.length);
  });

  it('draws an experiment without the paper\'s points', async () => {
    const svg = await renderSpecToSvg(experimentSpec(sampleExperiment({ paperSeries: [] })));
    expect(countMarks(svg, 'mark-line')).toBe(2);
  });
});
