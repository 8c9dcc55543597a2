import { runInMemory, runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { rmaRw } from '../src/index.js';

describe('rma-rw: simulation sweep', () => {
  // On the swarm's generator and judge (exclusion, liveness, heal probe) with no fault RMA-RW's
  // profile claims — jitter, clock drift and coordinator crashes only — plus client crashes on
  // every third seed. RMA-RW cannot recover a crashed holder: its waiters must give up typed while
  // nobody gets in beside it, and the heal probe finds its lock stuck (the one liveness failure
  // allowed there, with a short budget).
  const faultFree = { ...rmaRw, swarm: {} };
  const crashing = { ...rmaRw, swarm: { healBudgetMs: 0.1 } };
  // Small thresholds make batch resets and writer-phase ends happen within a short run.
  for (const [name, options] of [['A25 thresholds', {}], ['readerThreshold=3, writerThreshold=2', { readerThreshold: 3, writerThreshold: 2 }]] as const) {
    it(`${name}: 30 swarm seeds, exclusion holds and every acquire completes or fails typed, also with crashed holders`, async () => {
      let timeouts = 0;
      let crashes = 0;
      for (let seed = 1; seed <= 30; seed++) {
        let run: InMemoryRunResult | undefined;
        const judge = (r: InMemoryRunResult): string | undefined => {
          run = r;
          const untyped = Object.keys(r.verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError');
          return untyped.length > 0 ? `acquires failed with ${untyped.join(', ')}` : undefined;
        };
        const crash = seed % 3 === 0;
        const spec = { timeoutMs: crash ? 0.05 : [0.05, 5][seed % 2]! };
        const result = await runSwarmSeed(crash ? crashing : faultFree, seed, { pollIntervalNs: 300, releaseLinkTimeoutNs: 200_000, ...options }, { ...(crash ? { crashProbability: 0.05 } : {}), spec, judge });
        const why = `${result.description}\n${result.failure?.kind}: ${result.failure?.detail}`;
        expect(run, why).toBeDefined();
        if (result.failure && crash) {
          expect(result.failure.kind, why).toBe('liveness');
          expect(result.failure.detail, why).toMatch(/^after healing, locks [\d, ]+ not acquirable/);
        } else expect(result.failure, why).toBeUndefined();
        timeouts += run!.verdict.liveness.counts.acquireErrors.LockTimeoutError ?? 0;
        crashes += run!.crashed.size;
      }
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
