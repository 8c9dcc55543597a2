import { crashSweep, runCrashSweepSeed, runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { sherman } from '../src/index.js';

const run = (seed: number, protocolOptions: Record<string, boolean | number>, crashProbability = 0) => runCrashSweepSeed(sherman, seed, protocolOptions, crashProbability, [0, 0.5]);

describe('sherman: simulation sweep', () => {
  for (const hierarchy of [true, false]) {
    it(`hierarchy=${hierarchy}: 60 seeds, exclusion holds and every acquire completes or fails typed, also with crashed holders`, async () => {
      const { problems, timeouts, crashes } = await crashSweep(sherman, 60, { hierarchy }, [0, 0.5]);
      expect(problems).toEqual([]);
      expect(crashes).toBeGreaterThan(10);
      expect(timeouts).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe('sherman: the mutant is caught', () => {
  it('handing over locally after freeing the global word lets another node in beside the local holder', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 20 && caught === undefined; seed++) {
      const result = await run(seed, { mutantHandOverAfterRemoteRelease: true, maxLocalHandovers: 1 });
      if (result.verdict.violations.length > 0) caught = seed;
    }
    expect(caught).toBeDefined();
  });
});

describe('sherman: embedded substrate', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: sherman,
      computeNodes: 2,
      spec: { clients: 6, locks: 2, readRatio: 0, distribution: 'uniform', operations: 120, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3, timeoutMs: 5_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
