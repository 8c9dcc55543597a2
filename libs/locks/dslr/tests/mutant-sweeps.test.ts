/**
 * Random schedules find the paper's defects without being told where they are: for each
 * paper-literal switch (and the generation-check mutant), some seed within a small bound yields a
 * finding, while the fixed protocol passes the same seeds. A5 hangs the resetter forever, which a
 * run only shows at its horizon; its deterministic scenario is in scenarios/paper-defects.
 */
import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';
import { checkSeed, hotSwarmCase, swarmCase } from '@lockfabric/harness';
import type { SwarmCase } from '@lockfabric/harness';

const BOUND = 40;

async function firstFinding(make: (seed: number) => SwarmCase): Promise<{ seed: number; problems: string[] } | undefined> {
  for (let seed = 1; seed <= BOUND; seed++) {
    const found = await checkSeed(dslr, make(seed));
    if (found.problems.length > 0) return { seed, problems: found.problems };
  }
  return undefined;
}

describe('dslr: mutants caught by random schedules', () => {
  it('the fixed protocol passes the hot swarm', async () => {
    for (let seed = 1; seed <= 20; seed++) expect((await checkSeed(dslr, hotSwarmCase(seed))).problems, `seed ${seed}`).toEqual([]);
  }, 120_000);

  it('A1 (paper shared check): readers abort in crash-free runs', async () => {
    const found = await firstFinding((seed) => swarmCase(seed, { paperLiteralSharedCheck: true }));
    expect(found?.problems.join(' ')).toMatch(/aborts in a crash-free run/);
  }, 120_000);

  for (const [name, flag] of [
    ['A2 (paper shared skip)', 'paperLiteralSharedSkip'],
    ['A3 (FAA withdrawal)', 'paperLiteralFaaWithdraw'],
    ['A4 (zero after skip)', 'paperLiteralZeroAfterSkip'],
    ['A6 (stall on either counter)', 'paperLiteralStallOnEither'],
    ['no generation check', 'mutantNoGenerationCheck'],
  ] as const) {
    it(`${name}: an exclusion violation`, async () => {
      const found = await firstFinding((seed) => hotSwarmCase(seed, { [flag]: true }));
      // Caught as an overlap, or as a release refused inside its lease (a live holder was skipped).
      expect(found?.problems.join(' ')).toMatch(/^(exclusion|lease broken)/);
    }, 120_000);
  }
});
