import { checkHistory, collectAcquires } from '@lockfabric/check';
import { runInMemory } from '@lockfabric/harness';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { drtm } from '../src/index.js';
import { withSkew } from './scenario.js';
import { sweepCase } from './sweep-params.js';

const SEEDS = 500;
/**
 * Test-sized leases: the sweep's critical sections (≤ 3.2 µs) fit txMargin, so every reader
 * releases inside its lease; a lease still spans many round trips.
 */
const LEASES = { leaseMs: 0.03, driftNs: 1_000, txMarginNs: 4_000 };

/** drtm whose clients read clocks skewed by `offsetOf(client)` ns (the history keeps true time). */
function skewed(offsetOf: (client: number) => number): ProtocolDefinition {
  return { ...drtm, createClient: (ports, options) => drtm.createClient(withSkew(ports, offsetOf(ports.self.client)), options) };
}

async function run(seed: number, options: { protocol?: ProtocolDefinition; protocolOptions?: Record<string, number | boolean>; crashProbability?: number; spec?: Partial<WorkloadSpec> } = {}) {
  const c = sweepCase(seed, { timeoutMs: 5, ...options.spec });
  const result = await runInMemory({
    substrate: 'sim',
    protocol: options.protocol ?? drtm,
    protocolOptions: { ...LEASES, backoff: seed % 2 === 0, ...options.protocolOptions },
    spec: c.spec,
    computeNodes: c.computeNodes,
    colocatedClients: c.colocatedClients,
    ...(options.crashProbability ? { crashProbability: options.crashProbability } : {}),
  });
  return { c, result, verdict: result.verdict };
}

describe('drtm: simulation sweep', () => {
  it(`${SEEDS} seeds, mixed modes: reader-writer exclusion, every acquire completes or fails typed, no lease overrun`, async () => {
    let sharedGrants = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { c, result, verdict } = await run(seed);
      const where = `seed ${seed}: ${JSON.stringify(c)}`;
      expect(result.cutOff, where).toBe(false);
      expect(verdict.violations, where).toEqual([]);
      expect(verdict.liveness.ok, where).toBe(true);
      expect(Object.keys(verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError'), where).toEqual([]);
      expect(verdict.liveness.counts.releasesFailed, where).toBe(0);
      for (const acquires of collectAcquires(result.history).values()) sharedGrants += acquires.filter((a) => a.granted && a.mode === 'shared').length;
    }
    expect(sharedGrants).toBeGreaterThan(10_000);
  }, 120_000);

  it('clocks skewed by up to Δ either way: exclusion holds when driftNs covers the skew', async () => {
    const skewNs = 2_000;
    // Clients alternate between 0 and 2Δ ahead: each within Δ of a reference, pairwise 2Δ apart.
    const protocol = skewed((client) => (client % 2) * 2 * skewNs);
    for (let seed = 1; seed <= 60; seed++) {
      const { verdict } = await run(seed, { protocol, protocolOptions: { driftNs: skewNs, txMarginNs: 3_500 }, spec: { readRatio: 0.7, criticalSectionNs: 3_500 } });
      expect(verdict.violations, `seed ${seed}`).toEqual([]);
      expect(verdict.liveness.ok, `seed ${seed}`).toBe(true);
    }
  }, 60_000);

  it('crashed readers cost nothing (their leases run out); crashed writers block their lock, others fail typed', async () => {
    let readOnlyFailures = 0;
    let mixedFailures = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const readOnly = await run(seed, { crashProbability: 0.05, spec: { readRatio: 1, timeoutMs: 0.5 } });
      expect(readOnly.verdict.violations, `seed ${seed}`).toEqual([]);
      expect(readOnly.verdict.liveness.ok, `seed ${seed}`).toBe(true);
      readOnlyFailures += readOnly.verdict.liveness.counts.acquiresFailed;
      const mixed = await run(seed, { crashProbability: 0.05, spec: { readRatio: 0.5, timeoutMs: 0.5 } });
      expect(mixed.result.cutOff, `seed ${seed}`).toBe(false);
      expect(mixed.verdict.violations, `seed ${seed}`).toEqual([]);
      expect(mixed.verdict.liveness.ok, `seed ${seed}`).toBe(true);
      mixedFailures += mixed.verdict.liveness.counts.acquiresFailed;
    }
    expect(readOnlyFailures).toBe(0);
    expect(mixedFailures).toBeGreaterThan(0);
  }, 60_000);
});

describe('drtm: mutants and broken assumptions are caught', () => {
  it('a writer that takes over unexpired read leases breaks exclusion within a few seeds', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 30 && caught === undefined; seed++) {
      const { verdict } = await run(seed, { protocolOptions: { mutantWriterIgnoresLease: true }, spec: { readRatio: 0.5 } });
      if (verdict.violations.length > 0) caught = seed;
    }
    expect(caught).toBeDefined();
  });

  it('the same skew with driftNs 0 (no skew margin) breaks exclusion within a few seeds', async () => {
    const skewNs = 2_000;
    const protocol = skewed((client) => (client % 2) * 2 * skewNs);
    let caught: number | undefined;
    for (let seed = 1; seed <= 60 && caught === undefined; seed++) {
      const { verdict } = await run(seed, { protocol, protocolOptions: { driftNs: 0, txMarginNs: 3_500 }, spec: { readRatio: 0.7, criticalSectionNs: 3_500 } });
      if (verdict.violations.length > 0) caught = seed;
    }
    expect(caught).toBeDefined();
  });

  it('DrTM promises no order: the FIFO check the MCS sweep passes finds overtakes here', async () => {
    let overtakes = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const { result } = await run(seed, { spec: { readRatio: 0 } });
      overtakes += checkHistory(result.history, { fifo: { slackNs: 200 } }).fifo?.totalOvertakes ?? 0;
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
      protocolOptions: { leaseMs: 20, driftNs: 1_000_000, txMarginNs: 10_000_000, sleepUntilExpiry: true },
      spec: { clients: 4, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 120, thinkNs: 1_000, criticalSectionNs: 1_000, seed: 3, timeoutMs: 5_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
