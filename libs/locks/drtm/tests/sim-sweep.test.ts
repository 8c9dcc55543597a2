import { checkHistory, collectAcquires } from '@lockfabric/check';
import { runInMemory, runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult, SwarmSeedExtras, SwarmSeedResult } from '@lockfabric/harness';
import type { ProtocolDefinition, ProtocolOptions, SwarmProfile } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { drtm } from '../src/index.js';

/**
 * DrTM's sweeps on the swarm runner (one generator of seeds and faults, one checker path): the
 * swarm's judge (exclusion, liveness, the heal probe) on profiles of this file's own, since the
 * test-sized leases below are not the ones `check --swarm` runs DrTM with.
 */
const SEEDS = 300;
/**
 * Test-sized leases: the sweep's critical sections (≤ 3.3 µs) fit txMargin, so every reader
 * releases inside its lease; a lease still spans many round trips.
 */
const LEASES = { leaseNs: 30_000, driftNs: 1_000, txMarginNs: 4_000 };
/** No fault but clock offsets within Δ of each other (and the swarm's ±50 ppm rates). */
const WITHIN_DRIFT: SwarmProfile = { clockSkewNs: LEASES.driftNs };

const withProfile = (swarm: SwarmProfile): ProtocolDefinition => ({ ...drtm, swarm });

interface Seed {
  readonly result: SwarmSeedResult;
  /** The run, once it passed exclusion (the judge saw it). */
  readonly run?: InMemoryRunResult;
}

/** One swarm seed with DrTM's own judge: acquires fail only by timeout, releases never fail. */
async function seed(n: number, swarm: SwarmProfile, options: ProtocolOptions, extras: SwarmSeedExtras = {}): Promise<Seed> {
  let run: InMemoryRunResult | undefined;
  const judge = (r: InMemoryRunResult): string | undefined => {
    run = r;
    const untyped = Object.keys(r.verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError');
    if (untyped.length > 0) return `acquires failed with ${untyped.join(', ')}`;
    return r.verdict.liveness.counts.releasesFailed > 0 ? `${r.verdict.liveness.counts.releasesFailed} releases failed` : undefined;
  };
  const result = await runSwarmSeed(withProfile(swarm), n, { ...LEASES, backoff: n % 2 === 0, ...options }, { ...extras, judge });
  return { result, ...(run ? { run } : {}) };
}

const why = (s: Seed) => `${s.result.description}\n${s.result.failure?.kind}: ${s.result.failure?.detail}`;
/** Exclusion broken in the history: the swarm's own safety failure, before DrTM's judge ran. */
const overlap = (s: Seed) => s.result.failure?.kind === 'safety' && s.run === undefined;

/**
 * Each node's clock within Δ (4 µs) of true time, so up to 2Δ from another's; readers hold 3.5 µs.
 * (Offsets are drawn per node, so most seeds see less than 2Δ: at Δ = 2 µs, driftNs 0 passed 200
 * seeds; at 4 µs it fails seed 3.)
 */
const SKEW_NS = 4_000;
const SKEWED: SwarmProfile = { clockSkewNs: 2 * SKEW_NS };
const SKEW_SPEC = { readRatio: 0.7, criticalSectionNs: 3_500 };
const MUTANT_LEASE_SEED = 1;
const MUTANT_SKEW_SEED = 3;

describe('drtm: simulation sweep', () => {
  it(`${SEEDS} swarm seeds, mixed modes: reader-writer exclusion, every acquire completes or fails typed, no lease overrun, every lock free after the run`, async () => {
    let sharedGrants = 0;
    for (let n = 1; n <= SEEDS; n++) {
      const s = await seed(n, WITHIN_DRIFT, {}, { spec: { timeoutMs: 5 } });
      expect(s.result.failure, why(s)).toBeUndefined();
      for (const acquires of collectAcquires(s.run!.history).values()) sharedGrants += acquires.filter((a) => a.granted && a.mode === 'shared').length;
    }
    expect(sharedGrants).toBeGreaterThan(10_000);
  }, 120_000);

  it('clocks skewed by up to Δ either way: exclusion holds when driftNs covers the skew', async () => {
    for (let n = 1; n <= 60; n++) {
      const s = await seed(n, SKEWED, { driftNs: SKEW_NS, txMarginNs: 3_500 }, { spec: SKEW_SPEC });
      expect(s.result.failure, why(s)).toBeUndefined();
    }
  }, 60_000);

  it('crashed readers cost nothing (their leases run out); crashed writers block their lock, others fail typed', async () => {
    let readOnlyFailures = 0;
    let mixedFailures = 0;
    let blocked = 0;
    for (let n = 1; n <= 30; n++) {
      const extras = { crashProbability: 0.05 };
      const readOnly = await seed(n, WITHIN_DRIFT, {}, { ...extras, spec: { readRatio: 1, timeoutMs: 0.5 } });
      expect(readOnly.result.failure, why(readOnly)).toBeUndefined();
      readOnlyFailures += readOnly.run!.verdict.liveness.counts.acquiresFailed;
      // A writer that crashed holding its lock keeps it (DrTM has no writer lease): the heal probe
      // finds it stuck, a liveness failure; nothing else may fail.
      const mixed = await seed(n, { ...WITHIN_DRIFT, healBudgetMs: 0.1 }, {}, { ...extras, spec: { readRatio: 0.5, timeoutMs: 0.5 } });
      expect(mixed.run, why(mixed)).toBeDefined();
      if (mixed.result.failure) {
        expect(mixed.result.failure.kind, why(mixed)).toBe('liveness');
        expect(mixed.result.failure.detail, why(mixed)).toMatch(/^after healing, locks [\d, ]+ not acquirable/);
        blocked++;
      }
      mixedFailures += mixed.run!.verdict.liveness.counts.acquiresFailed;
    }
    expect(readOnlyFailures).toBe(0);
    expect(mixedFailures).toBeGreaterThan(0);
    expect(blocked).toBeGreaterThan(0);
  }, 60_000);
});

describe('drtm: mutants and broken assumptions are caught on pinned swarm seeds', () => {
  // Each seed was the first to catch its mutant; the same seed passes DrTM itself (the sweeps above).
  it(`a writer that takes over unexpired read leases breaks exclusion (seed ${MUTANT_LEASE_SEED})`, async () => {
    expect(overlap(await seed(MUTANT_LEASE_SEED, WITHIN_DRIFT, { mutantWriterIgnoresLease: true }, { spec: { readRatio: 0.5, timeoutMs: 5 } }))).toBe(true);
    expect((await seed(MUTANT_LEASE_SEED, WITHIN_DRIFT, {}, { spec: { readRatio: 0.5, timeoutMs: 5 } })).result.failure).toBeUndefined();
  });

  it(`the same skew with driftNs 0 (no skew margin) breaks exclusion (seed ${MUTANT_SKEW_SEED})`, async () => {
    expect(overlap(await seed(MUTANT_SKEW_SEED, SKEWED, { driftNs: 0, txMarginNs: 3_500 }, { spec: SKEW_SPEC }))).toBe(true);
  });

  it('DrTM promises no order: the FIFO check the MCS sweep passes finds overtakes here', async () => {
    let overtakes = 0;
    for (let n = 1; n <= 10; n++) {
      const s = await seed(n, WITHIN_DRIFT, {}, { spec: { readRatio: 0, timeoutMs: 5 } });
      overtakes += checkHistory(s.run!.history, { fifo: { slackNs: 200 } }).fifo?.totalOvertakes ?? 0;
    }
    expect(overtakes).toBeGreaterThan(0);
  });
});

describe('drtm: embedded substrate', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: drtm,
      // Leases long enough that a busy event loop cannot push a reader's hold past its lease.
      protocolOptions: { leaseNs: 20_000_000, driftNs: 1_000_000, txMarginNs: 10_000_000, sleepUntilExpiry: true },
      spec: { clients: 4, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 120, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3, timeoutMs: 5_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
