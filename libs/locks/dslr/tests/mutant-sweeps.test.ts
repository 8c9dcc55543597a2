/**
 * Random schedules find the paper's defects without being told where they are: for each
 * paper-literal switch (and the generation-check mutant), some swarm seed within a small bound
 * yields a finding, while the fixed protocol passes the same seeds. The seeds are the swarm
 * runner's (`runSwarmSeed`), on one hot lock with a counter limit of 8 (`DSLR_HOT`). A5 hangs the
 * resetter forever, which a run only shows at its horizon; its deterministic scenario is in
 * scenarios/paper-defects.
 */
import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';
import { DSLR_HOT, ResetCounter, dslrFaultFree, dslrFaultFreeJudge, dslrFaultyJudge, runSwarmSeed } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { SwarmSeedResult } from '@lockfabric/harness';

const BOUND = 40;

/** One hot-lock swarm seed, judged as DSLR's faulty sweep is (a release refused inside its lease is unsafe). */
function hotSeed(seed: number, options: ProtocolOptions = {}): Promise<SwarmSeedResult> {
  const tally = { crashSeeds: 0, smallLimitSeeds: 0, aborts: 0 };
  return runSwarmSeed(dslr, seed, { ...DSLR_HOT.options, ...options }, { spec: DSLR_HOT.spec, judge: dslrFaultyJudge(tally) });
}

async function firstFailure(run: (seed: number) => Promise<SwarmSeedResult>): Promise<SwarmSeedResult | undefined> {
  for (let seed = 1; seed <= BOUND; seed++) {
    const result = await run(seed);
    if (result.failure) return result;
  }
  return undefined;
}

describe('dslr: mutants caught by swarm seeds', () => {
  it('the fixed protocol passes the hot swarm', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const result = await hotSeed(seed);
      expect(result.failure, `${result.description}\n${result.failure?.detail}`).toBeUndefined();
    }
  }, 120_000);

  it('A1 (paper shared check): readers abort in fault-free runs', async () => {
    const found = await firstFailure((seed) => {
      const tally = new ResetCounter();
      return runSwarmSeed(dslrFaultFree(dslr), seed, { paperLiteralSharedCheck: true }, { trace: tally, judge: dslrFaultFreeJudge(tally) });
    });
    // Its aborted readers withdraw their tickets: repair CAS the judge reports before the aborts.
    expect(found?.failure?.detail).toMatch(/(repair CAS|aborts) in a fault-free run/);
  }, 120_000);

  for (const [name, flag] of [
    ['A2 (paper shared skip)', 'paperLiteralSharedSkip'],
    ['A3 (FAA withdrawal)', 'paperLiteralFaaWithdraw'],
    ['A4 (zero after skip)', 'paperLiteralZeroAfterSkip'],
    ['A6 (stall on either counter)', 'paperLiteralStallOnEither'],
    ['no generation check', 'mutantNoGenerationCheck'],
  ] as const) {
    it(`${name}: a safety failure`, async () => {
      const found = await firstFailure((seed) => hotSeed(seed, { [flag]: true }));
      // Caught as an overlap, or as a release refused inside its lease (a live holder was skipped).
      expect(found?.failure?.kind).toBe('safety');
    }, 120_000);
  }
});
