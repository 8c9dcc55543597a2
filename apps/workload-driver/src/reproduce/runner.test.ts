import { describe, expect, it } from 'vitest';
import type { ExperimentDef, Measure, PaperDef } from './experiment.js';
import { jobOf, micro, ratioAt } from './experiment.js';
import { assemble, expand } from './runner.js';

const measure = (goodputMops: number): Measure => ({ goodputMops, p50Us: 1, p99Us: 2, p999Us: 3, meanUs: 1, grantP50Us: NaN, grantP90Us: NaN, writerIaUs: NaN, writerWaitUs: NaN, verbsPerOp: 2, verbsPerAcquire: 1, mnNicCeilingPct: NaN, committedKtps: NaN, recoveryMs: NaN, acquires: 10, failures: 0, checkerOk: true, wallMs: 1 });

const experiment: ExperimentDef = {
  id: 'test-fig1',
  paper: 'shiftlock',
  figure: 'Test Fig. 1',
  title: 't',
  params: { clients: 4 },
  x: { field: 'readRatio', label: 'read ratio', scale: 'linear' },
  y: { field: 'goodputMops', label: 'goodput', scale: 'linear' },
  xs: { full: [0.5, 0.95], quick: [0.5], smoke: [0.5] },
  series: [
    { name: 'A', protocol: 'caslock' },
    { name: 'B', protocol: 'mcs' },
    { name: 'Later', protocol: 'not-yet-built' },
  ],
  claims: [
    { id: 'a-vs-b', text: 'A/B', kind: 'ratio', paper: 2, uses: ['A', 'B'], ours: ratioAt('A', 'B', 'first'), note: 'why' },
    { id: 'a-vs-later', text: 'A/Later', kind: 'ratio', paper: 2, uses: ['A', 'Later'], ours: ratioAt('A', 'Later', 'first') },
  ],
  job: (series, x) => jobOf(series, { spec: micro({ clients: 4, locks: 8, readRatio: x, distribution: 'uniform', operations: 10 }), computeNodes: 1, memoryNodes: 1 }),
};
const paper: PaperDef = { paper: 'shiftlock', title: 't', experiments: [experiment, { ...experiment, id: 'test-fig2', claims: [] }] };
const known = new Set(['caslock', 'mcs']);

describe('reproduce runner', () => {
  it('skips a protocol this build lacks, names it and the claims that need it', () => {
    const { jobs, planned } = expand({ papers: [paper], scale: 'full', workers: 1 }, known);
    expect(jobs.map((j) => j.protocol)).toEqual(['caslock', 'caslock', 'mcs', 'mcs']);
    const result = assemble(planned[0]![0]!, [measure(2.2), measure(2.2), measure(1), measure(1)], 'full');
    expect(result.series.map((s) => s.name)).toEqual(['A', 'B']);
    expect(result.params['skipped']).toBe('Later: not in this build; claims left out: a-vs-later');
    expect(result.claims).toHaveLength(1);
    expect(result.claims[0]).toMatchObject({ id: 'a-vs-b', paper: 2, ours: 2.2, unit: '×', verdict: 'reproduced', sameDirection: true });
    expect(result.claims[0]!.note).toBeUndefined();
  });

  it('runs a run two experiments share only once, and gives the note when a claim is off', () => {
    const { jobs, planned } = expand({ papers: [paper], scale: 'smoke', workers: 1 }, known);
    expect(jobs).toHaveLength(2);
    expect(planned[0]![1]!.jobIndex).toEqual(planned[0]![0]!.jobIndex);
    const result = assemble(planned[0]![0]!, [measure(1), measure(2)], 'smoke');
    expect(result.claims[0]).toMatchObject({ ours: 0.5, verdict: 'opposite', note: 'why' });
  });

  it('sizes the spec from the paper scale: every series of a point runs the same workload', () => {
    const { jobs } = expand({ papers: [paper], scale: 'full', workers: 1 }, known);
    expect(jobs[0]!.spec).toEqual(jobs[2]!.spec);
    expect(jobs[0]!.spec).not.toEqual(jobs[1]!.spec);
  });
});
