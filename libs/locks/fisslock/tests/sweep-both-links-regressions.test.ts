import { describe, it } from 'vitest';
import type { FaultSpec } from '@lockfabric/switch';
import { runWide } from './support/wide-run.js';
import { expectSound } from './support/wide-sweep.js';
import { FAULTS_10_BOTH_WAYS } from './support/workload.js';

const FAULTS_2_BOTH_WAYS: FaultSpec = {
  rules: [{ direction: 'both', loss: 0.02, duplicate: 0.02, reorder: 0.02, reorderNsMax: 20_000, delay: 0.02, delayNsMin: 1_000, delayNsMax: 50_000 }],
};

// Two more seeds of the both-links sweep that broke exclusion before the abort rule of seed 8
// (agent-pool.ts timeoutFreeUnsafe; tests/sweep-both-links.test.ts). Seed 100 at 10 %: machine 1
// had abort-only RELEASEs seq 224 and 231 out (tasks 14 and 1048589) with a copy of task 15's
// ACQUIRE between them; 224 freed the lock, the copy got a ① grant, 231 freed task 15's lifetime,
// machine 3 got the lock shared (①), and task 15's exclusive FREE (seq 238, no incarnation check)
// freed it under machine 3 — machine 2 was then granted exclusively. Seed 95 at 2 % on both links
// broke exclusion twice before. (Their old-rule replays were retired with the rules' mutants:
// docs/decisions/0013-fisslock-agent-state-machine.md.)
describe('both links: seeds broken by the timeout-free behind an undecided ACQUIRE', () => {
  const cases: [string, number, FaultSpec][] = [
    ['10 %', 100, FAULTS_10_BOTH_WAYS],
    ['2 %', 95, FAULTS_2_BOTH_WAYS],
  ];
  for (const [rate, seed, faults] of cases) {
    it(`seed ${seed} at ${rate}: sound`, async () => {
      expectSound(`seed ${seed}`, await runWide(seed, { faults }));
    }, 120_000);
  }
});

// Seeds 393 and 500 at 10 %: two abort-only RELEASEs of one lock were out from machine 2 (the
// lock orphaned there with ② holders, so each timeout-free is refused). The first refusal built
// the empty agent, which handed the lock on by a transfer; the second refusal, arriving while that
// agent was pending, restored it beside the transfer: two agents (393), and in 500 an exclusive
// grant under an exclusive holder. Two fixes stop it, each alone: one timeout-free per lock at a
// time (timeoutFreeUnsafe), and a refused timeout-free leaves a pending agent alone (the
// `refused` transition of src/pool/agent-state.ts, a case of its unit test).
describe('both links: two refused timeout-frees never restore a handed-on agent', () => {
  for (const seed of [393, 500]) {
    it(`seed ${seed} at 10 %: sound`, async () => {
      expectSound(`seed ${seed}`, await runWide(seed, { faults: FAULTS_10_BOTH_WAYS }));
    }, 120_000);
  }
});

// Seed 56 at 10 %: machine 3's abort-only RELEASEs seq 756 and 763 (tasks 31 and 1048601) sat
// behind an ingress gap; meanwhile a transfer to machine 3's task 32 was accepted and installed,
// and 763 then found mid = machine 3 and inca 0 (an accepted transfer resets it) and freed task
// 32's lifetime; machine 3's task 1048602 got a ① grant under it. One timeout-free per lock at a
// time (timeoutFreeUnsafe) keeps the second abort back until the first is answered.
describe('both links: one timeout-free per lock at a time', () => {
  it('seed 56 at 10 %: sound', async () => {
    expectSound('seed 56', await runWide(56, { faults: FAULTS_10_BOTH_WAYS }));
  }, 120_000);
});
