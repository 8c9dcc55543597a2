import { describe, expect, it } from 'vitest';
import type { BenchReport } from '../report/bench-report.js';
import { benchExitCode } from './bench-exit.js';

const ok = { protocol: 'caslock', acquires: 40, violations: 0, livenessViolations: 0 } as unknown as BenchReport;
const refused = { ...ok, acquires: 0, notStarted: [{ node: 1, error: 'compute-1: busy: a run is running' }] } as BenchReport;

describe('benchExitCode', () => {
  it('a live run that no compute node started exits 4, not 0', () => {
    expect(benchExitCode([refused])).toBe(4);
    expect(benchExitCode([ok, refused])).toBe(4);
  });

  it('a run with acquires is judged by its checker even when a node did not start', () => {
    expect(benchExitCode([{ ...refused, acquires: 12 }])).toBe(0);
    expect(benchExitCode([{ ...refused, acquires: 12, livenessViolations: 1 }])).toBe(3);
  });

  it('a violation outranks a failed run, which outranks liveness', () => {
    expect(benchExitCode([refused, { ...ok, violations: 1 }])).toBe(1);
    expect(benchExitCode([refused, { ...ok, livenessViolations: 2 }])).toBe(4);
    expect(benchExitCode([{ ...ok, warmUp: { operations: 10, acquires: 10, violations: 1 } }])).toBe(1);
    expect(benchExitCode([ok])).toBe(0);
  });
});
