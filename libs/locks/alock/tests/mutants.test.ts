import type { ProtocolOptions } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { FAULT_FREE, runAlockSeed } from './support/swarm-judge.js';
import type { AlockSeed } from './support/swarm-judge.js';

/**
 * ALock's mutants on the swarm runner: pinned swarm seeds of the fault-free profile on one hot lock
 * both classes fight over (no timeouts to hide anything). Each seed was the first of 1–30 to catch
 * its mutant; the same seed with ALock itself passes, so the mutant is what fails it.
 */
const HOT = { locks: 1, thinkNs: 0, criticalSectionNs: 300, operations: 160, timeoutMs: 20 };
const hot = (seed: number, options: ProtocolOptions = {}) => runAlockSeed(seed, { swarm: FAULT_FREE, spec: HOT, options });
/** ALock itself on a pinned seed, run once per seed (the control of several mutants). */
const controls = new Map<number, Promise<AlockSeed>>();
const control = (seed: number) => controls.get(seed) ?? controls.set(seed, hot(seed)).get(seed)!;

/** Exclusion broken in the history: the swarm's own safety failure, before ALock's judge ran. */
const historyOverlap = (s: AlockSeed) => s.result.failure?.kind === 'safety' && s.run === undefined;
const invariantBroken = (s: AlockSeed, rule: string) => s.result.failure?.kind === 'safety' && (s.invariants?.violations.some((v) => v.startsWith(rule)) ?? false);

describe('alock mutants are caught on pinned swarm seeds', () => {
  it.each([
    ['M0, the naive lock mixing local CPU CAS and remote CAS on one word (the emulator models Table 1)', 1, { mutantNaiveLocalCas: true }],
    ['M1, leaders skipping the Peterson entry', 1, { mutantSkipPeterson: true }],
    ['M2, a leader writing victim before enqueueing', 3, { mutantVictimFirst: true }],
  ] as const)('%s: exclusion broken (seed %i)', async (_name, seed, options) => {
    expect(historyOverlap(await hot(seed, options))).toBe(true);
    expect((await control(seed)).result.failure).toBeUndefined();
  });

  it('M4, budget 0 entering without re-arbitration, breaks bounded overtaking only (I6, seed 1)', async () => {
    const budgets = { localBudget: 2, remoteBudget: 2 };
    const broken = await hot(1, { ...budgets, mutantSkipReacquire: true });
    expect(invariantBroken(broken, 'I6')).toBe(true);
    expect(broken.invariants!.maxOvertakes).toBeGreaterThan(2);
    // The history passed exclusion (ALock's judge ran): only the fairness checker sees this mutant.
    expect(broken.run!.verdict.violations).toEqual([]);
    expect((await hot(1, budgets)).result.failure).toBeUndefined();
  });

  it('M8, a local release clearing T_L with a store instead of CAS, strands a linked waiter (I10, seed 1)', async () => {
    expect(invariantBroken(await hot(1, { mutantPlainLocalRelease: true }), 'I10')).toBe(true);
    expect((await control(1)).result.failure).toBeUndefined();
  });
});
