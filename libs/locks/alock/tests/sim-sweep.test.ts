import { runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';
import { describeCase, runSwarmCase, swarmCase } from './support/swarm.js';

/**
 * 500 seeds of mixed local and remote clients (every seed has both), each seed its own mix of
 * clients, locks, budgets, poll periods, schedule jitter, compute and memory nodes, and timeouts.
 * Every run must pass the history checker (exclusion, liveness: each acquire ok or a typed failure)
 * and ALock's own invariants over the protocol steps (I1, I5, I6 bounded overtaking, I7, I10).
 */
const SEEDS = Number(process.env.LOCKFABRIC_SIM_SEEDS ?? 500); // more seeds: LOCKFABRIC_SIM_SEEDS=5000
const CHUNK = 100;

const totals = { acquires: 0, failedAcquires: 0, abandoned: 0, headWaits: 0, reacquired: 0, passed: 0, localOnlyVerbs: 0, singleNodeSeeds: 0 };

describe('alock: simulation sweep, local and remote clients together', () => {
  for (let first = 1; first <= SEEDS; first += CHUNK) {
    const last = Math.min(SEEDS, first + CHUNK - 1);
    it(`seeds ${first}–${last}: no violations, every acquire completes or fails typed, invariants hold`, async () => {
      const failures: string[] = [];
      for (let seed = first; seed <= last; seed++) {
        const c = swarmCase(seed);
        const result = await runSwarmCase(c);
        const { run, invariants } = result;
        const failedTyped = run.verdict.liveness.counts.acquiresFailed;
        const ok = run.verdict.ok && !run.cutOff && invariants.ok && invariants.maxOvertakes <= Math.max(c.protocolOptions.localBudget, c.protocolOptions.remoteBudget);
        if (!ok) failures.push(describeCase(c, result));
        totals.acquires += run.verdict.liveness.counts.acquiresOk;
        totals.failedAcquires += failedTyped;
        totals.abandoned += invariants.abandoned;
        totals.headWaits += invariants.headWaits;
        totals.reacquired += invariants.entries.reacquired;
        totals.passed += invariants.entries.passed;
        if (c.memoryNodes === 1) {
          // Every co-located client is local to every lock: the memory node must never initiate a verb.
          totals.singleNodeSeeds++;
          for (const counters of Object.values(run.nicCounters)) totals.localOnlyVerbs += counters.byInitiator['0']?.verbs ?? 0;
        }
      }
      expect(failures, failures.join('\n')).toEqual([]);
    }, 180_000);
  }

  it('the sweep exercised hand-offs, re-arbitration, contended heads and abandoned waits; local clients used no verbs', () => {
    expect(totals.acquires).toBeGreaterThan(SEEDS * 70);
    expect(totals.passed).toBeGreaterThan(SEEDS * 20);
    expect(totals.reacquired).toBeGreaterThan(SEEDS * 10);
    expect(totals.headWaits).toBeGreaterThan(SEEDS * 20);
    expect(totals.abandoned).toBeGreaterThan(SEEDS);
    expect(totals.singleNodeSeeds).toBeGreaterThan(SEEDS * 0.6);
    expect(totals.localOnlyVerbs).toBe(0);
  });
});

describe('alock: same code on other schedules', () => {
  const spec = { clients: 6, locks: 2, readRatio: 0.3, distribution: 'uniform' as const, operations: 120, thinkNs: 200, criticalSectionNs: 500, seed: 11, timeoutMs: 2_000 };

  it('sim is deterministic: same seed, same history digest and verbs', async () => {
    const a = await runInMemory({ substrate: 'sim', protocol: alock, spec, colocatedClients: 3 });
    const b = await runInMemory({ substrate: 'sim', protocol: alock, spec, colocatedClients: 3 });
    expect(a.digest).toBe(b.digest);
    expect(a.verbs).toEqual(b.verbs);
  });

  it('embedded (real time, one process) passes the checker', async () => {
    const result = await runInMemory({ substrate: 'embedded', protocol: alock, spec, colocatedClients: 3 });
    expect(result.verdict.ok).toBe(true);
    expect(result.summary.acquires).toBe(120);
  });
});
