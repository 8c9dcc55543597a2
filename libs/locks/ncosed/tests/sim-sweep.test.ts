import { runInMemory, runSwarmSeed, sweepUnrecoverableCrashes } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { ncosed } from '../src/index.js';

describe('ncosed: simulation sweep', () => {
  // NCoSED cannot recover a crashed holder: its waiters must give up typed while nobody gets in
  // beside it (the harness's rules for such protocols, `sweepUnrecoverableCrashes`).
  it('40 swarm seeds: exclusion holds and every acquire completes or fails typed, also with crashed holders', async () => {
    const { problems, crashes, timeouts } = await sweepUnrecoverableCrashes(ncosed, 40, { pollIntervalNs: 300 });
    expect(problems).toEqual([]);
    // Both halves were exercised: crashed holders, and waiters that gave up behind them.
    expect(crashes).toBeGreaterThan(10);
    expect(timeouts).toBeGreaterThan(0);
  }, 60_000);
});

describe('ncosed: the sweep catches what it is there for', () => {
  it('mutant: skipping the wait for readers breaks exclusion, and the sweep reports it', async () => {
    const { problems } = await sweepUnrecoverableCrashes(ncosed, 3, { pollIntervalNs: 300, mutantSkipReaderDrain: true });
    expect(problems.join('\n')).toMatch(/safety/);
  }, 60_000);
});

describe('ncosed: the mutant is caught on a pinned swarm seed', () => {
  // NCoSED's own swarm profile (its faults), as `check --swarm` runs it; seed 1 was the first of 1–30 to catch it.
  it('an exclusive requester granted by its predecessor that skips the wait for readers overlaps them (seed 1); NCoSED itself passes that seed', async () => {
    expect((await runSwarmSeed(ncosed, 1, { mutantSkipReaderDrain: true })).failure?.kind).toBe('safety');
    expect((await runSwarmSeed(ncosed, 1)).failure).toBeUndefined();
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
