import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';
import { checkConflictFcfs } from '@lockfabric/check';
import { ResetCounter, runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult, SwarmMix } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { Random } from '@lockfabric/ports';

// DSLR's sweeps on the swarm's generator and judge (exclusion, liveness, heal probe), with DSLR's
// own judges added: no release refused inside its lease under faults, and in fault-free runs
// conflicting requests served in FAA order (I7) with no repair CAS (I12) and no abort.
// CI's `check --swarm` runs dslr seeds 1–200 already; this judges 60 more with DSLR's own eyes.
const FAULTY_SEEDS = { first: 201, count: 60 };
const FAULT_FREE_SEEDS = 120;

/** DSLR with no fault its profile claims, and no small counter limit: jitter, clock drift, coordinator crashes. */
const faultFree = { ...dslr, swarm: { options: (random: Random): ProtocolOptions => ({ leaseMs: [0.2, 0.5, 1][random.int(3)]! }) } };

function faultFreeJudge(tally: ResetCounter) {
  return (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
    const cas = (run.verbs['cas'] ?? 0) - tally.releaseCas;
    if (cas > 0) return `${cas} repair CAS in a fault-free run`;
    const aborts = run.verdict.liveness.counts.acquireErrors['LockAbortedError'] ?? 0;
    if (aborts > 0) return `${aborts} aborts in a fault-free run`;
    // FAA order is arrival order at the NIC: invoke times may differ from it by the jitter.
    const fcfs = checkConflictFcfs(run.history, { slackNs: 1_000 + mix.jitterNs });
    return fcfs.ok ? undefined : `FCFS: ${JSON.stringify(fcfs.violations[0])}`;
  };
}

describe('dslr: simulation sweep', () => {
  it(`${FAULTY_SEEDS.count} swarm seeds with DSLR's faults: no lease broken, every repair path reached`, async () => {
    const resets = new ResetCounter();
    let crashSeeds = 0;
    let smallLimitSeeds = 0;
    const judge = (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
      if (mix.crashProbability > 0) crashSeeds++;
      if (Number(mix.options['counterLimit'] ?? Infinity) <= 16) smallLimitSeeds++;
      // A release refused inside its lease means a live holder was skipped or reset.
      const broken = run.summary.failuresByCode['LEASE_BROKEN'] ?? 0;
      return broken > 0 ? `lease broken: ${broken} releases found their ticket skipped or reset inside the lease` : undefined;
    };
    for (let seed = FAULTY_SEEDS.first; seed < FAULTY_SEEDS.first + FAULTY_SEEDS.count; seed++) {
      const result = await runSwarmSeed(dslr, seed, {}, { trace: resets, judge });
      expect(result.failure, `${result.description}\n${result.failure?.detail}`).toBeUndefined();
    }
    expect(crashSeeds).toBeGreaterThan(FAULTY_SEEDS.count / 4);
    expect(smallLimitSeeds).toBeGreaterThan(FAULTY_SEEDS.count / 20);
    for (const cause of ['skip', 'resetter-zero', 'frozen-watchdog-zero']) expect(resets.causes[cause] ?? 0, cause).toBeGreaterThan(0);
  }, 240_000);

  it(`${FAULT_FREE_SEEDS} fault-free swarm seeds: FCFS, no repair CAS, no abort`, async () => {
    for (let seed = 1; seed <= FAULT_FREE_SEEDS; seed++) {
      const tally = new ResetCounter();
      const result = await runSwarmSeed(faultFree, seed, {}, { trace: tally, judge: faultFreeJudge(tally) });
      expect(result.failure, `${result.description}\n${result.failure?.detail}`).toBeUndefined();
    }
  }, 240_000);

  it('the fault-free judge can fail: counter resets every few acquires (counterLimit=8) are repair CAS it reports', async () => {
    let caught = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const tally = new ResetCounter();
      const result = await runSwarmSeed(faultFree, seed, { counterLimit: 8 }, { trace: tally, judge: faultFreeJudge(tally) });
      if (result.failure?.detail.includes('repair CAS')) caught++;
    }
    expect(caught).toBeGreaterThan(0);
  });
});
