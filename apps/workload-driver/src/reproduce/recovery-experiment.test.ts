import { describe, expect, it } from 'vitest';
import { FISSLOCK_PAPER } from './papers/fisslock.js';
import { measurePoint } from './measure.js';
import { assemble, expand } from './runner.js';

// FissLock Fig. 17 middle as a reproduce experiment: each step of a real recovery timed over the
// held locks. The times are host figures; what is asserted is the plan and that the recovery of
// the planted state is consistent (a recovery that reports problems fails its run).
describe('reproduce fisslock-fig17-recovery', () => {
  const paper = { ...FISSLOCK_PAPER, experiments: FISSLOCK_PAPER.experiments.filter((e) => e.id === 'fisslock-fig17-recovery') };

  it('plans one timed recovery per step and lock count, no workload run', () => {
    const { jobs } = expand({ papers: [paper], scale: 'smoke', workers: 1 });
    expect(jobs.map((j) => `${j.recovery?.phase}@${j.recovery?.heldLocks}`)).toEqual(['S1@1000', 'S1@100000', 'S2@1000', 'S2@100000', 'S3@1000', 'S3@100000']);
  });

  it('measures each step and judges both claims', async () => {
    const { jobs, planned } = expand({ papers: [paper], scale: 'smoke', workers: 1 });
    const small = jobs.map((j) => ({ ...j, recovery: { ...j.recovery!, heldLocks: j.recovery!.heldLocks / 10 } }));
    const measures = [];
    for (const job of small) measures.push(await measurePoint(job));
    for (const m of measures) {
      expect(m.checkerOk).toBe(true);
      expect(m.recoveryMs).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(m.goodputMops)).toBe(true);
    }
    const result = assemble(planned[0]![0]!, measures, 'smoke');
    expect(result.series.map((s) => s.name)).toEqual(['S1', 'S2', 'S3']);
    expect(result.params['checkerFailed']).toBeUndefined();
    expect(result.claims.map((c) => c.id)).toEqual(['s12-proportional', 's3-trivial']);
  });
});
