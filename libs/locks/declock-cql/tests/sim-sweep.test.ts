import { describe, expect, it } from 'vitest';
import { declockCql } from '../src/index.js';
import { sweepRun } from '@lockfabric/lock-declock/testing';

const SEEDS_PER_BATCH = 100;
const BATCHES = 5;
const LONG = 180_000;
const READER_GRANT_SEED = 1;
const BATCH_SEED = 2;

/**
 * Deterministic simulation on the swarm runner: 500 fault-free swarm seeds (3–12 clients, 1–6
 * locks, 60–200 operations, mixed modes, schedule jitter, clock drift, coordinator crashes), every
 * tenth with callers that give up.
 */
describe('declock-cql: simulation sweep', () => {
  for (let batch = 0; batch < BATCHES; batch++) {
    const from = batch * SEEDS_PER_BATCH + 1;
    it(`seeds ${from}–${from + SEEDS_PER_BATCH - 1}: exclusion, liveness, strict task-fairness, no resets, ≤ 2 verbs per acquire`, async () => {
      for (let seed = from; seed < from + SEEDS_PER_BATCH; seed++) {
        const impatient = seed % 10 === 0;
        const run = await sweepRun(declockCql, seed, impatient ? { spec: { timeoutMs: 0.01 } } : {});
        expect(run.swarm.failure, run.why).toBeUndefined();
        // Failure-free and C ≥ clients: no reset ever (I15), so no acquire needs more than FAA + WRITE (I4).
        expect(run.resets.size, run.why).toBe(0);
        expect(run.maxFirstTryAcquireVerbs, run.why).toBeLessThanOrEqual(2);
        if (!impatient) {
          expect(run.fairness!.ok, run.why).toBe(true);
          expect(run.result!.summary.acquires, run.why).toBe(run.result!.summary.releases);
        }
      }
    }, LONG);
  }

  it('client crashes: resets with the failure-detector timeout recover every lock; no violation', async () => {
    let recovered = 0;
    for (let seed = 1001; seed <= 1040; seed++) {
      const run = await sweepRun(declockCql, seed, {
        crashProbability: 0.02,
        protocolOptions: { acquireTimeoutNs: 200_000, acquireTimeoutStaggerNs: 50_000, suspectAfterNs: 1_000_000 },
        spec: { timeoutMs: 5, readRatio: 0.3 },
      });
      expect(run.swarm.failure, run.why).toBeUndefined();
      if (run.result!.crashed.size > 0 && (run.resets.get('acquire-timeout') ?? 0) > 0) recovered++;
    }
    expect(recovered).toBeGreaterThan(10);
  }, LONG);

  it('queue overflow with more contenders than C (up to 2C−1): resets, never a violation', async () => {
    let overflowResets = 0;
    for (let seed = 2001; seed <= 2030; seed++) {
      const run = await sweepRun(declockCql, seed, {
        protocolOptions: { capacity: 4, allowQueueOverflow: true },
        // Six workload clients and, after the run, the swarm's heal probe: 2C−1 clients in all.
        spec: { clients: 6, locks: 1, timeoutMs: 20 },
      });
      expect(run.swarm.failure, run.why).toBeUndefined();
      overflowResets += run.resets.get('queue-overflow') ?? 0;
    }
    expect(overflowResets).toBeGreaterThan(0);
  }, LONG);
});

describe('declock-cql: mutants are caught on pinned swarm seeds', () => {
  // Each seed was the first to catch its mutant (seeds 1–60); the same seed passes DecLock-CQL itself.
  const run = (seed: number, protocolOptions: Record<string, boolean> = {}) => sweepRun(declockCql, seed, { protocolOptions, spec: { readRatio: 0.5, timeoutMs: 20 } });
  /** Exclusion broken in the history: the swarm's own safety failure, before the sweep's judge ran. */
  const overlap = (r: Awaited<ReturnType<typeof sweepRun>>) => r.swarm.failure?.kind === 'safety' && r.result === undefined;

  it.each([
    ['mutantReaderGrant (a reader joins whenever a reader is queued)', READER_GRANT_SEED, 'mutantReaderGrant'],
    ['mutantBatchPastWriters (a writer grants readers behind the next writer)', BATCH_SEED, 'mutantBatchPastWriters'],
  ] as const)('%s violates exclusion (seed %i)', async (_name, seed, mutant) => {
    expect(overlap(await run(seed, { [mutant]: true }))).toBe(true);
    expect((await run(seed)).swarm.failure).toBeUndefined();
  }, LONG);
});
