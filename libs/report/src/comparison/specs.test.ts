import { describe, expect, it } from 'vitest';
import { row, sampleDemo } from '../../tests/support/sample-comparison.js';
import { countMarks } from '../../tests/support/svg-marks.js';
import { renderSpecToSvg } from '../vega.js';
import { goodputBarsSpec, latencyCdfSpec, switchShareSpec, throughputBarsSpec, verbsBarsSpec } from './specs.js';

describe('comparison plots', () => {
  const demo = sampleDemo();

  it('draws one CDF line per protocol that has CDF points', async () => {
    const rows = [...demo.results, row('mcs', 'rdma', { latencyCdfUs: [] })];
    const svg = await renderSpecToSvg(latencyCdfSpec(rows));
    expect(countMarks(svg, 'mark-line')).toBe(demo.results.length);
  });

  it('leaves 0 µs points off the log axis instead of failing the plot', async () => {
    const zero = row('drtm', 'rdma', { latencyCdfUs: [{ fraction: 0.5, us: 0 }, { fraction: 1, us: 10 }] });
    const spec = latencyCdfSpec([zero]) as { data: { values: unknown[] } };
    expect(spec.data.values).toHaveLength(1);
  });

  it('draws one throughput bar per protocol', async () => {
    const svg = await renderSpecToSvg(throughputBarsSpec(demo.results));
    expect(countMarks(svg, 'mark-rect')).toBe(demo.results.length);
  });

  it('stacks one verbs segment per protocol and opcode used, none for the switch family', async () => {
    const svg = await renderSpecToSvg(verbsBarsSpec(demo.results));
    // caslock and dslr: read + cas; shiftlock: read + masked cas + masked faa; switch rows: none.
    expect(countMarks(svg, 'mark-rect')).toBe(2 + 2 + 3);
  });

  it('draws a switch-share bar only for rows that report one', async () => {
    const svg = await renderSpecToSvg(switchShareSpec(demo.results));
    expect(countMarks(svg, 'mark-rect')).toBe(2);
  });

  it('draws one goodput bar per transactional row only', async () => {
    const rows = demo.results.map((r, i) => (i < 3 ? { ...r, transactions: { workload: 'tatp', committedPerSec: 100 * (i + 1) } } : r));
    const svg = await renderSpecToSvg(goodputBarsSpec(rows));
    expect(countMarks(svg, 'mark-rect')).toBe(3);
  });
});
