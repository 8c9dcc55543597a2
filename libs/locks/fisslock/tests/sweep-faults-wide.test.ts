import { describe, expect, it } from 'vitest';
import { FAULTS_10 } from './support/sweep.js';
import { FAULTS_2, runWide } from './support/wide-run.js';
import type { WideResult } from './support/wide-run.js';

/** Exclusion and typed outcomes; a timed-out acquire (liveness) is allowed, an overlap never. */
function expectSafe(at: string, r: WideResult): void {
  expect(r.violations, at).toEqual([]);
  expect(r.untyped, `${at}: acquires failed without LockTimeoutError`).toBe(0);
  expect(r.unfinished, `${at}: acquires neither granted nor timed out`).toBe(0);
}

/** 10%-fault seeds of runWide that still break exclusion (the timeout-free race described below). */
const KNOWN_OPEN_10: readonly number[] = [10, 27];

// The recovery-sim workload with no failure: 8 locks on the decider, 3 nodes × 2 clients × 40
// ops on 4 hot locks, holds of 20–220 µs, so releases, ② grants, transfers and aborts overlap.
describe('fisslock wide sweep with faults (recovery-sim shape, no failure)', () => {
  it('2% loss/dup/reorder/delay, seeds 1–80: no exclusion violation', async () => {
    let granted = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const r = await runWide(seed, { faults: FAULTS_2 });
      expectSafe(`seed ${seed} (runWide(${seed}, { faults: FAULTS_2 }))`, r);
      granted += r.granted;
    }
    expect(granted).toBeGreaterThan(80 * 240 * 0.9);
  }, 120_000);

  // Still open at 10% (4 of seeds 1–200: 10, 27, 109, 145; 0 of 300 at 2%). Mostly a retransmitted
  // (DUP) ② RELEASE whose original already released the holder at an earlier agent: it circles,
  // the current agent writes it off as a lost ② copy (§13.4), its inca runs one ahead of the
  // decider's and the next FREE/transfer passes under a ② holder. Dropping DUP releases instead
  // fixes those seeds but stalls locks whose only surviving RELEASE copy is a DUP one.
  it('10% loss/dup/reorder/delay, seeds 1–40 except the known open ones: no exclusion violation', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      if (KNOWN_OPEN_10.includes(seed)) continue;
      expectSafe(`seed ${seed} (runWide(${seed}, { faults: FAULTS_10 }))`, await runWide(seed, { faults: FAULTS_10 }));
    }
  }, 120_000);

  // A tracker, not a pass: these seeds must keep failing until the mechanism above is fixed; then
  // vitest reports this test as unexpectedly passing, and the seeds move into the sweep above.
  it.fails('known open at 10% faults (issue 4): seeds 10 and 27 still break exclusion', async () => {
    for (const seed of KNOWN_OPEN_10) expectSafe(`seed ${seed}`, await runWide(seed, { faults: FAULTS_10 }));
  }, 60_000);
});

describe('fisslock wide-sweep regressions', () => {
  it('seed 29: a stale abort-RELEASE written off as a lost ② grant put the agent’s inca ahead; the next FREE passed under a ② holder', async () => {
    const r = await runWide(29, { faults: FAULTS_2 });
    expectSafe('seed 29', r);
    // the abort whose request was released long ago was dropped, not counted as a ② grant
    expect(r.counters.droppedAborts).toBeGreaterThan(0);
  }, 60_000);

  it('seed 52: a transfer GRANT resent after its ACK was lost was re-refused against the lock’s new state and restored a second agent', async () => {
    const r = await runWide(52, { faults: FAULTS_2 });
    expectSafe('seed 52', r);
    // the resend was stopped when the lock's next agent arrived on the sender's machine
    expect(r.counters.settledOnInstall).toBeGreaterThan(0);
  }, 60_000);
});

describe('fisslock wide-sweep regressions at 10% faults', () => {
  const cases: [number, string][] = [
    [115, 'a reissued (unreached) abort freed the lock while a transfer GRANT to another local task was on its way'],
    [89, 'a refused transfer put its grantee into the restored queue twice; the second copy came back as a follower GRANT whose stray release emptied the holders'],
  ];
  // The decider's side of seed 52 (a resent transfer GRANT refused again on mid alone) has its own
  // unit test in libs/switch (decider.test.ts, "lost refusals").

  for (const [seed, cause] of cases) {
    it(`seed ${seed}: ${cause}`, async () => {
      expectSafe(`seed ${seed}`, await runWide(seed, { faults: FAULTS_10 }));
    }, 60_000);
  }

  it('seed 55 at 2%: a DUP copy recorded after another machine bounced it; its requester aborted unREACHED and the timeout-free freed a lock being handed to it', async () => {
    expectSafe('seed 55', await runWide(55, { faults: FAULTS_2 }));
  }, 60_000);
});

describe('the wide sweep’s exclusion check', () => {
  it('fails on the decider mutant without the incarnation check (no faults needed)', async () => {
    const r = await runWide(10, { mutantNoIncarnationCheck: true });
    expect(r.violations.length).toBeGreaterThan(0);
  }, 60_000);
});
