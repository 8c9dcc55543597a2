import { describe, expect, it } from 'vitest';
import type { ExperimentResult, ReproduceResult } from './contract.js';
import { seriesTables } from './claims-table.js';
import { peakOver, valueAt } from './experiment.js';
import { DECLOCK } from './papers/declock.js';
import { expand } from './runner.js';

const experiment = (id: string, label: string, ys: readonly number[], xs: readonly number[] = [8, 256]): ExperimentResult => ({
  id,
  figure: id,
  title: `title of ${id}`,
  params: {},
  x: { field: 'clients', label: 'clients', scale: 'linear' },
  y: { field: id, label, scale: 'linear' },
  series: [{ name: 'A', points: xs.map((x, i) => ({ x, y: ys[i]! })) }],
  paperSeries: [],
  claims: [],
  wallMs: 0,
});

const result = (experiments: ExperimentResult[]): ReproduceResult => ({ kind: 'reproduce', version: 1, quick: false, startedAt: '', wallMs: 0, papers: [{ paper: 'declock', title: 't', experiments }] });

describe('reproduce --table', () => {
  it('puts figures of the same runs side by side, one row per series and x', () => {
    const text = seriesTables(result([experiment('e-goodput', 'goodput', [1.5, 0.25]), experiment('e-verbs', 'verbs', [1.1, 22])]));
    const lines = text.split('\n');
    expect(lines[0]).toBe('e-goodput, e-verbs (title of e-goodput)');
    expect(lines[1]!.split(/\s{2,}/)).toEqual(['series', 'clients', 'goodput', 'verbs']);
    expect(lines.slice(3).map((l) => l.trim().split(/\s+/))).toEqual([
      ['A', '8', '1.50', '1.10'],
      ['A', '256', '0.25', '22'],
    ]);
  });

  it('gives runs at other points a table of their own', () => {
    const text = seriesTables(result([experiment('e1', 'goodput', [1, 2]), experiment('e2', 'goodput', [1, 2], [16, 32])]));
    expect(text.split('\n\n')).toHaveLength(2);
  });
});

describe('DecLock Fig. 3 knee', () => {
  it('reads the collapse from the peak and a point as it is', () => {
    const y = (_: string, x: number) => ({ 8: 1, 16: 2, 256: 0.25 })[x as 8 | 16 | 256] ?? NaN;
    expect(peakOver('A', 'last')(y, [8, 16, 256])).toBe(8);
    expect(valueAt('A', 'first')(y, [8, 16, 256])).toBe(1);
  });

  it('runs the four lock families once for its three figures, 8 → 256 clients, 32 clients per CN', () => {
    const knee = DECLOCK.experiments.filter((e) => e.id.startsWith('declock-fig3-'));
    expect(knee.map((e) => e.id)).toEqual(['declock-fig3-knee', 'declock-fig3-verbs', 'declock-fig3-nic']);
    const { jobs } = expand({ papers: [{ ...DECLOCK, experiments: knee }], scale: 'full', workers: 1 });
    expect(jobs).toHaveLength(4 * 6);
    expect(new Set(jobs.map((j) => j.protocol))).toEqual(new Set(['caslock', 'dslr-backoff', 'shiftlock', 'declock']));
    expect(jobs.map((j) => [j.spec.clients, j.computeNodes]).slice(0, 6)).toEqual([[8, 1], [16, 1], [32, 1], [64, 2], [128, 4], [256, 8]]);
    for (const j of jobs) expect(j.spec).toMatchObject({ locks: 100_000, distribution: { zipf: 0.99 }, readRatio: 0.5, csVerbs: 1 });
  });
});
