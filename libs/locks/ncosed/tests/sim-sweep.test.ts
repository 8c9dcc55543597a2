import { crashSweep, runCrashSweepSeed, runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { ncosed } from '../src/index.js';

const run = (seed: number, protocolOptions: Record<string, boolean | number>, crashProbability = 0) => runCrashSweepSeed(ncosed, seed, protocolOptions, crashProbability);

describe('ncosed: simulation sweep', () => {
  for (const [name, options] of [['default options', {}]] as const) {
    it(`${name}: 40 seeds, exclusion holds and every acquire completes or fails typed, also with crashed holders`, async () => {
      const { problems, timeouts, crashes } = await crashSweep(ncosed, 40, { pollIntervalNs: 300, ...options });
      expect(problems).toEqual([]);
      expect(crashes).toBeGreaterThan(10);
      expect(timeouts).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe('ncosed: the mutant is caught', () => {
  it('an exclusive requester granted by its predecessor that skips the wait for readers overlaps them', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 20 && caught === undefined; seed++) {
      const result = await run(seed, { mutantSkipReaderDrain: true });
      if (result.verdict.violations.length > 0) caught = seed;
    }
    expect(caught).toBeDefined();
  });
});

describe('ncosed: embedded substrate', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: ncosed,
      computeNodes: 2,
      spec: { clients: 6, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 120, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3, timeoutMs: 5_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
