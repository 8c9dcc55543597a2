import { runInMemory } from '@lockfabric/harness';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { rmaRw } from '../src/index.js';

/** A small hot workload whose shape varies with the seed: 4–11 clients over 2–3 compute nodes, 1–4 locks. */
function sweepSpec(seed: number): { spec: WorkloadSpec; computeNodes: number } {
  return {
    spec: {
      clients: 4 + (seed % 8),
      locks: 1 + (seed % 4),
      readRatio: [0, 0.5, 0.9][seed % 3]!,
      distribution: seed % 3 === 0 ? { zipf: 0.99 } : 'uniform',
      operations: 150,
      thinkNs: (seed * 97) % 1_500,
      criticalSectionNs: 300 + ((seed * 389) % 2_000),
      seed,
      timeoutMs: [0.05, 5][seed % 2]!,
    },
    computeNodes: 2 + (seed % 2),
  };
}

async function run(seed: number, protocolOptions: Record<string, boolean | number>, crashProbability = 0) {
  const { spec: drawn, computeNodes } = sweepSpec(seed);
  // Waiters behind a crashed holder poll until their timeout: keep it short in crash runs.
  const spec = crashProbability > 0 ? { ...drawn, timeoutMs: 0.05 } : drawn;
  return runInMemory({ substrate: 'sim', protocol: rmaRw, protocolOptions, spec, computeNodes, ...(crashProbability > 0 ? { crashProbability } : {}) });
}

describe('rma-rw: simulation sweep', () => {
  // Small thresholds make batch resets and writer-phase ends happen within a short run.
  for (const [name, options] of [['A25 thresholds', {}], ['readerThreshold=3, writerThreshold=2', { readerThreshold: 3, writerThreshold: 2 }]] as const) {
    it(`${name}: 40 seeds, exclusion holds and every acquire completes or fails typed, also with crashed holders`, async () => {
      let timeouts = 0;
      let crashes = 0;
      for (let seed = 1; seed <= 40; seed++) {
        // Every third seed crashes clients instead of releasing: their locks stay taken (no lease,
        // no repair), so waiters must end with LockTimeoutError and nobody may get in beside them.
        const result = await run(seed, { pollIntervalNs: 300, releaseLinkTimeoutNs: 200_000, ...options }, seed % 3 === 0 ? 0.05 : 0);
        const where = `seed ${seed}`;
        expect(result.cutOff, where).toBe(false);
        expect(result.verdict.violations, where).toEqual([]);
        expect(result.verdict.liveness.ok, where).toBe(true);
        const errors = result.verdict.liveness.counts.acquireErrors;
        expect(Object.keys(errors).filter((name) => name !== 'LockTimeoutError'), where).toEqual([]);
        timeouts += errors.LockTimeoutError ?? 0;
        crashes += result.crashed.size;
      }
      expect(crashes).toBeGreaterThan(10);
      expect(timeouts).toBeGreaterThan(0);
    }, 60_000);
  }
});

describe('rma-rw: the mutant is caught', () => {
  it('a writer that holds without waiting for the readers inside to leave overlaps them', async () => {
    let caught: number | undefined;
    for (let seed = 1; seed <= 20 && caught === undefined; seed++) {
      const result = await run(seed, { mutantSkipDrain: true });
      if (result.verdict.violations.length > 0) caught = seed;
    }
    expect(caught).toBeDefined();
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
