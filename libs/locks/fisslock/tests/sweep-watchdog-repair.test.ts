import { describe, expect, it } from 'vitest';
import { runWide } from './support/wide-run.js';
import { expectEnd, expectSound } from './support/wide-sweep.js';
import { FAULTS_10, FAULTS_10_BOTH_WAYS } from './support/workload.js';

// Spec §12.9 across seeds: with the T_STUCK watchdog and its per-lock repair wired (recoverable
// clients; runWide `watchdog`), the combined losses that leave locks stuck in the plain sweeps end
// with every lock free, and the repair itself never breaks what the sweeps check. Repairs are a
// metric of their own, not failures.
const CASES = [
  { name: 'FAULTS_10', faults: FAULTS_10, from: 1, to: 60 },
  { name: 'FAULTS_10_BOTH_WAYS', faults: FAULTS_10_BOTH_WAYS, from: 1, to: 60 },
];

describe('fisslock wide sweep with the T_STUCK watchdog and per-lock repair', () => {
  for (const { name, faults, from, to } of CASES) {
    it(`${name}, seeds ${from}–${to}: sound, every lock free at the end of every quiescent run, repairs counted`, async () => {
      let repairs = 0;
      let stuckWithout = 0;
      for (let seed = from; seed <= to; seed++) {
        const r = await runWide(seed, { faults, watchdog: {} });
        const at = `seed ${seed} (runWide(${seed}, { faults: ${name}, watchdog: {} }))`;
        expectSound(at, r);
        expect(r.repairProblems, at).toEqual([]);
        if (r.endState.checked) expectEnd(at, r.endState, true);
        repairs += r.repairs;
        if (seed - from < 20) stuckWithout += (await runWide(seed, { faults, watchdog: { off: true } })).endState.stuck.length;
      }
      // the plain runs of the first 20 seeds leave locks stuck; the repair freed them all
      expect(stuckWithout).toBeGreaterThan(0);
      expect(repairs).toBeGreaterThan(0);
    }, 300_000);
  }
});
