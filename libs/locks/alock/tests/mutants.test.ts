import type { ProtocolOptions } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { runSwarmCase, swarmCase } from './support/swarm.js';
import type { SwarmOverrides, SwarmResult } from './support/swarm.js';

/** The first seed in 1..maxSeeds whose run `caught` flags, with its result. */
async function hunt(maxSeeds: number, overrides: SwarmOverrides, caught: (result: SwarmResult) => boolean) {
  for (let seed = 1; seed <= maxSeeds; seed++) {
    const c = swarmCase(seed, overrides);
    const result = await runSwarmCase(c);
    if (caught(result)) return { seed, c, result };
  }
  return undefined;
}

/** A hot lock both classes fight over, with no timeouts to hide anything. */
const hot: SwarmOverrides['spec'] = { locks: 1, thinkNs: 0, criticalSectionNs: 300, operations: 160, timeoutMs: 20 };

const exclusionBroken = (r: SwarmResult) => r.run.verdict.violations.length > 0 || r.invariants.violations.some((v) => v.startsWith('I1'));

describe('alock mutants are caught', () => {
  it('M0, the naive lock mixing local CPU CAS and remote CAS on one word, violates mutual exclusion (the emulator models Table 1)', async () => {
    const found = await hunt(30, { spec: hot, singleMemoryNode: true, protocolOptions: { mutantNaiveLocalCas: true } }, (r) => r.run.verdict.violations.length > 0);
    expect(found, 'no seed in 1..30 showed the naive lock failing').toBeDefined();
    // The same seed with ALock itself is clean.
    const correct = await runSwarmCase(swarmCase(found!.seed, { spec: hot, singleMemoryNode: true }));
    expect(correct.run.verdict.ok).toBe(true);
    expect(correct.invariants.violations).toEqual([]);
  });

  it('M1, leaders skipping the Peterson entry, lets a local and a remote holder overlap', async () => {
    const found = await hunt(30, { spec: hot, protocolOptions: { mutantSkipPeterson: true } }, exclusionBroken);
    expect(found, 'no seed in 1..30 caught M1').toBeDefined();
  });

  it('M4, budget 0 entering without re-arbitration, breaks bounded overtaking (I6)', async () => {
    const options: ProtocolOptions = { mutantSkipReacquire: true, localBudget: 2, remoteBudget: 2 };
    const found = await hunt(30, { spec: hot, protocolOptions: options }, (r) => r.invariants.violations.some((v) => v.startsWith('I6')));
    expect(found, 'no seed in 1..30 caught M4').toBeDefined();
    expect(found!.result.invariants.maxOvertakes).toBeGreaterThan(2);
    // Mutual exclusion still holds: only the fairness checker can see this mutant.
    expect(found!.result.run.verdict.violations).toEqual([]);
  });

  it('M8, a local release clearing T_L with a store instead of CAS, strands a linked waiter (I10)', async () => {
    const found = await hunt(30, { spec: hot, protocolOptions: { mutantPlainLocalRelease: true } }, (r) => r.invariants.violations.some((v) => v.startsWith('I10')));
    expect(found, 'no seed in 1..30 caught M8').toBeDefined();
  });
});
