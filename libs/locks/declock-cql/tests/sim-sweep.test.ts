import { describe, expect, it } from 'vitest';
import { declockCql } from '../src/index.js';
import { sweepRun } from './sweep-support.js';

const SEEDS_PER_BATCH = 100;
const BATCHES = 5;
const LONG = 180_000;

/**
 * Deterministic simulation: 500 seeds of small random workloads (4–12 clients, 1–8 locks,
 * 100–250 operations, mixed modes, schedule jitter), every tenth with callers that give up.
 */
describe('declock-cql: simulation sweep', () => {
  for (let batch = 0; batch < BATCHES; batch++) {
    const from = batch * SEEDS_PER_BATCH + 1;
    it(`seeds ${from}–${from + SEEDS_PER_BATCH - 1}: exclusion, liveness, strict task-fairness, no resets, ≤ 2 verbs per acquire`, async () => {
      for (let seed = from; seed < from + SEEDS_PER_BATCH; seed++) {
        const impatient = seed % 10 === 0;
        const run = await sweepRun(declockCql, seed, impatient ? { spec: { timeoutMs: 0.01 } } : {});
        expect(run.result.verdict.ok, run.why).toBe(true);
        expect(run.result.cutOff, run.why).toBe(false);
        // Failure-free and C ≥ clients: no reset ever (I15), so no acquire needs more than FAA + WRITE (I4).
        expect(run.resets.size, run.why).toBe(0);
        expect(run.maxFirstTryAcquireVerbs, run.why).toBeLessThanOrEqual(2);
        if (!impatient) {
          expect(run.fairness.ok, run.why).toBe(true);
          expect(run.result.summary.acquires, run.why).toBe(run.result.summary.releases);
        }
      }
    }, LONG);
  }

  it('client crashes: resets with the failure-detector timeout recover every lock; no violation', async () => {
    let recovered = 0;
    for (let seed = 1001; seed <= 1040; seed++) {
      const run = await sweepRun(declockCql, seed, {
        crashProbability: 0.02,
        protocolOptions: { acquireTimeoutMs: 0.2, acquireTimeoutStaggerMs: 0.05, suspectAfterMs: 1 },
        spec: { timeoutMs: 5, readRatio: 0.3 },
      });
      expect(run.result.verdict.ok, run.why).toBe(true);
      expect(run.result.cutOff, run.why).toBe(false);
      if (run.result.crashed.size > 0 && (run.resets.get('acquire-timeout') ?? 0) > 0) recovered++;
    }
    expect(recovered).toBeGreaterThan(10);
  }, LONG);

  it('queue overflow with more contenders than C (up to 2C−1): resets, never a violation', async () => {
    let overflowResets = 0;
    for (let seed = 2001; seed <= 2030; seed++) {
      const run = await sweepRun(declockCql, seed, {
        protocolOptions: { capacity: 4, allowQueueOverflow: true },
        spec: { clients: 7, locks: 1, timeoutMs: 20 },
      });
      expect(run.result.verdict.ok, run.why).toBe(true);
      expect(run.result.cutOff, run.why).toBe(false);
      overflowResets += run.resets.get('queue-overflow') ?? 0;
    }
    expect(overflowResets).toBeGreaterThan(0);
  }, LONG);
});

describe('declock-cql: mutants are caught', () => {
  const firstFailing = async (protocolOptions: Record<string, boolean>, bad: (run: Awaited<ReturnType<typeof sweepRun>>) => boolean) => {
    for (let seed = 1; seed <= 40; seed++) {
      const run = await sweepRun(declockCql, seed, { protocolOptions, spec: { readRatio: 0.5, timeoutMs: 20 } });
      if (bad(run)) return seed;
    }
    return undefined;
  };

  it('mutantReaderGrant (a reader joins whenever a reader is queued) violates exclusion', async () => {
    expect(await firstFailing({ mutantReaderGrant: true }, (run) => !run.result.verdict.exclusion.ok)).toBeDefined();
  }, LONG);

  it('mutantBatchPastWriters (a writer grants readers behind the next writer) violates exclusion', async () => {
    expect(await firstFailing({ mutantBatchPastWriters: true }, (run) => !run.result.verdict.exclusion.ok)).toBeDefined();
  }, LONG);

});
