import { describe, expect, it } from 'vitest';
import { dslrFaultyJudge } from './dslr-sweep-check.js';
import type { InMemoryRunResult } from './in-memory-run.js';
import type { SwarmMix } from './swarm/case.js';

// The faulty judge's own checks, on hand-made run results (the sweeps show it passes real runs).
function run(acquireErrors: Record<string, number>, failuresByCode: Record<string, number> = {}): InMemoryRunResult {
  return { verdict: { liveness: { counts: { acquireErrors } } }, summary: { failuresByCode } } as unknown as InMemoryRunResult;
}
const mix = { crashProbability: 0.01, options: { counterLimit: 8 } } as unknown as SwarmMix;

describe('dslrFaultyJudge', () => {
  it('passes typed failures, counts what the seed reached', () => {
    const tally = { crashSeeds: 0, smallLimitSeeds: 0, aborts: 0 };
    expect(dslrFaultyJudge(tally)(run({ LockAbortedError: 2, LockTimeoutError: 1, FabricAccessError: 3 }), mix)).toBeUndefined();
    expect(tally).toEqual({ crashSeeds: 1, smallLimitSeeds: 1, aborts: 2 });
  });

  it('reports an untyped acquire failure and a release refused inside its lease', () => {
    const judge = dslrFaultyJudge({ crashSeeds: 0, smallLimitSeeds: 0, aborts: 0 });
    expect(judge(run({ LockAbortedError: 1, TypeError: 1 }), mix)).toBe('untyped acquire failures: TypeError');
    expect(judge(run({}, { LEASE_BROKEN: 2 }), mix)).toMatch(/^lease broken: 2 releases/);
  });
});
