import { describe, expect, it } from 'vitest';
import { FAULTS_10, runSeed } from './support/sweep.js';
import type { SweepResult } from './support/sweep.js';
import { expectEnd } from './support/wide-sweep.js';

/** Per seed: the properties of spec §11 the sweep checks; a failing seed is named in the message. */
function expectSound(seed: number, r: SweepResult): void {
  const at = `seed ${seed} (runSeed(${seed}, { faults: FAULTS_10 }))`;
  expect(r.violations, at).toEqual([]);
  expect(r.stalled, at).toBeUndefined();
  expect(r.untyped, `${at}: acquires failed without LockTimeoutError`).toBe(0);
  expect(r.unfinished, `${at}: acquires neither granted nor timed out`).toBe(0);
  expect(r.agentsPerLockMax, at).toBeLessThanOrEqual(1);
  expect(r.modeMismatch, `${at}: agent mode differs from the decider's (Lemma 1)`).toBe(0);
  expectEnd(at, r.endState);
}

// loss, duplication, reordering and delay at 10% each on every switch egress (FAULTS_10)
describe('fisslock seed sweep with faults: 500 seeds', () => {
  const SEEDS = 500;
  const PER_TEST = 100;
  for (let from = 1; from <= SEEDS; from += PER_TEST) {
    it(`seeds ${from}–${from + PER_TEST - 1}: exclusion, one agent per lock, Lemma 1, every acquire granted or timed out`, async () => {
      let granted = 0;
      for (let seed = from; seed < from + PER_TEST; seed++) {
        const r = await runSeed(seed, { ops: 4, faults: FAULTS_10, maxEvents: 400_000 });
        expectSound(seed, r);
        granted += r.granted;
      }
      // most acquires get through despite 10% of everything going wrong
      expect(granted).toBeGreaterThan(PER_TEST * 24 * 0.8);
    }, 120_000);
  }
});

describe('fisslock faulty-sweep regressions', () => {
  // Seeds that stalled or broke exclusion before the fixes; each note names the cause.
  const cases: [number, string][] = [
    [2, 'lost ① GRANT after a bounced ③: REACHED abort circled forever, lock orphaned (the stall)'],
    [16, 'unreached abort took the timeout-free path while another local task’s ① GRANT was in flight'],
    [23, 'duplicated ① GRANT installed a second agent, whose FREE freed an exclusively held lock'],
    [28, 'lost refusal of a timeout-free: the retransmitted abort was only routed, the lock stayed orphaned'],
    [111, 'both GRANT and copy of ② grants lost: the agent waited for copies that never came'],
  ];
  for (const [seed, cause] of cases) {
    it(`seed ${seed} (ops 6): ${cause}`, async () => {
      const r = await runSeed(seed, { ops: 6, faults: FAULTS_10, maxEvents: 200_000 });
      expectSound(seed, r);
      expect(r.quiescent, `seed ${seed}: packets still circling at the end`).toBe(true);
      expect(r.endState.checked).toBe(true);
    }, 60_000);
  }
});
