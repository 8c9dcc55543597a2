import { runInMemory, runSwarmSeed, sweepUnrecoverableCrashes } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { rmaRw } from '../src/index.js';

describe('rma-rw: simulation sweep', () => {
  // RMA-RW cannot recover a crashed holder: its waiters must give up typed while nobody gets in
  // beside it (the harness's rules for such protocols, `sweepUnrecoverableCrashes`).
  // Small thresholds make batch resets and writer-phase ends happen within a short run.
  for (const [name, options] of [['A25 thresholds', {}], ['readerThreshold=3, writerThreshold=2', { readerThreshold: 3, writerThreshold: 2 }]] as const) {
    it(`${name}: 30 swarm seeds, exclusion holds and every acquire completes or fails typed, also with crashed holders`, async () => {
      const { problems, crashes, timeouts } = await sweepUnrecoverableCrashes(rmaRw, 30, { pollIntervalNs: 300, releaseLinkTimeoutNs: 200_000, ...options });
      expect(problems).toEqual([]);
      // Both halves were exercised: crashed holders, and waiters that gave up behind them.
      expect(crashes).toBeGreaterThan(10);
      expect(timeouts).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe('rma-rw: the mutant is caught on a pinned swarm seed', () => {
  // RMA-RW's own swarm profile (its faults), as `check --swarm` runs it; seed 2 was the first of 1–30 to catch it.
  it('a writer that holds without waiting for the readers inside to leave overlaps them (seed 2); RMA-RW itself passes that seed', async () => {
    expect((await runSwarmSeed(rmaRw, 2, { mutantSkipDrain: true })).failure?.kind).toBe('safety');
    expect((await runSwarmSeed(rmaRw, 2)).failure).toBeUndefined();
  });
});

describe('rma-rw: reader batches', () => {
  it('read-only: a full batch of readers closes itself when no writer comes (readerThreshold=2), every acquire succeeds', async () => {
    const result = await runInMemory({
      substrate: 'sim',
      protocol: rmaRw,
      protocolOptions: { readerThreshold: 2 },
      spec: { clients: 6, locks: 1, readRatio: 1, distribution: 'uniform', operations: 200, thinkNs: 500, criticalSectionNs: 1_000, seed: 5, timeoutMs: 5 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(200);
    expect(result.summary.failures ?? 0).toBe(0);
  });
});

describe('rma-rw: embedded substrate', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: rmaRw,
      computeNodes: 2,
      spec: { clients: 6, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 120, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3, timeoutMs: 5_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
