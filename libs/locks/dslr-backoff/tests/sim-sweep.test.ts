import { describe, expect, it } from 'vitest';
import { dslr } from '@lockfabric/lock-dslr';
import type { HistoryEvent } from '@lockfabric/check';
import { dslrBackoff } from '../src/index.js';
import { checkConflictFcfs } from '@lockfabric/check';
import { DSLR_HOT, ResetCounter, dslrFaultFree, dslrFaultFreeJudge, dslrFaultyJudge, runInMemory, runSwarmSeed, sweepDslrFaultFree, sweepDslrFaulty } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { SwarmSeedResult } from '@lockfabric/harness';

// DSLR+'s sweeps on the swarm's generator and judge, with DSLR's own judges added (as DSLR's
// sweep does). CI's `check --swarm` runs dslr-backoff seeds 1–200; this judges 100 more. Its
// profile draws multi-slot tickets and more small counter limits than DSLR's: without them no
// frozen word's watchdog zeroing happened in seeds 201–300 (DSLR+'s backoff paces the polls).
const FAULTY_SEEDS = { first: 201, count: 100 };
const FAULT_FREE_SEEDS = 40;
const faultFree = dslrFaultFree(dslrBackoff);

describe('dslr-backoff: simulation sweep', () => {
  it(`${FAULTY_SEEDS.count} swarm seeds with DSLR+'s faults: no lease broken, every repair path reached`, async () => {
    const { reached, resets, failures } = await sweepDslrFaulty(dslrBackoff, FAULTY_SEEDS);
    expect(failures).toEqual([]);
    expect(reached.crashSeeds).toBeGreaterThan(FAULTY_SEEDS.count / 4);
    expect(reached.aborts).toBeGreaterThan(0);
    for (const cause of ['skip', 'resetter-zero', 'frozen-watchdog-zero']) expect(resets.causes[cause] ?? 0, cause).toBeGreaterThan(0);
  }, 240_000);

  it(`${FAULT_FREE_SEEDS} fault-free swarm seeds: FCFS, no repair CAS, no abort`, async () => {
    expect(await sweepDslrFaultFree(faultFree, FAULT_FREE_SEEDS)).toEqual([]);
  }, 240_000);

  it('polls more often than DSLR’s wait estimate but less than busy polling', async () => {
    const spec = { clients: 10, locks: 1, readRatio: 0.3, distribution: 'uniform' as const, operations: 200, thinkNs: 1_000, criticalSectionNs: 5_000, seed: 9 };
    const plus = await runInMemory({ substrate: 'sim', protocol: dslrBackoff, spec });
    const paced = await runInMemory({ substrate: 'sim', protocol: dslr, spec });
    const busy = await runInMemory({ substrate: 'sim', protocol: dslr, protocolOptions: { polling: 'busy' }, spec });
    expect(plus.verdict.ok).toBe(true);
    // One FAA per acquire; releases are fenced CAS (the paper's FAA release is `paperLiteralFaaRelease`).
    expect(plus.verbs['faa']).toBe(200);
    expect(plus.verbs['read']!).toBeGreaterThan(paced.verbs['read']!);
    expect(plus.verbs['read']!).toBeLessThan(busy.verbs['read']!);
  });
});

async function firstFailure(run: (seed: number) => Promise<SwarmSeedResult>): Promise<SwarmSeedResult | undefined> {
  for (let seed = 1; seed <= 40; seed++) {
    const result = await run(seed);
    if (result.failure) return result;
  }
  return undefined;
}

describe('dslr-backoff: mutants', () => {
  it('the FCFS checker copy fails on an overtaking writer', () => {
    const ev = (client: string, mode: 'shared' | 'exclusive', phase: 'invoke' | 'ok', timeNs: number): HistoryEvent => ({ client, lock: 0, mode, op: 'acquire', phase, timeNs });
    const history = [ev('a', 'shared', 'invoke', 0), ev('b', 'exclusive', 'invoke', 5_000), ev('b', 'exclusive', 'ok', 6_000), ev('a', 'shared', 'ok', 20_000)];
    expect(checkConflictFcfs(history, { slackNs: 1_000 }).ok).toBe(false);
  });

  it('A1 (paper shared check) makes readers abort in fault-free swarm runs within 40 seeds', async () => {
    const found = await firstFailure((seed) => {
      const tally = new ResetCounter();
      return runSwarmSeed(faultFree, seed, { paperLiteralSharedCheck: true }, { trace: tally, judge: dslrFaultFreeJudge(tally) });
    });
    // Its aborted readers withdraw their tickets: repair CAS the judge reports before the aborts.
    expect(found?.failure?.detail).toMatch(/(repair CAS|aborts) in a fault-free run/);
  }, 120_000);

  it('A4 (zero after skip) is unsafe within 40 hot-lock swarm seeds', async () => {
    const hot = (options: ProtocolOptions) => (seed: number) => runSwarmSeed(dslrBackoff, seed, { ...DSLR_HOT.options, ...options }, { spec: DSLR_HOT.spec, judge: dslrFaultyJudge({ crashSeeds: 0, smallLimitSeeds: 0, aborts: 0 }) });
    const found = await firstFailure(hot({ paperLiteralZeroAfterSkip: true }));
    expect(found?.failure?.kind).toBe('safety');
    // The fixed protocol passes the seed that caught the mutant.
    expect((await hot({})(found!.seed)).failure).toBeUndefined();
  }, 120_000);
});
