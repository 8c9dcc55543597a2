/**
 * The defects of the paper's pseudocode (spec §15) and the ambiguities the spec resolves: each
 * scenario runs with the spec's fix, where it passes, and with the paper-literal switch, where the
 * defect shows — an exclusion violation for the safety defects, a spurious abort, a lost release or
 * a 2λ stall for the liveness ones.
 */
import { describe, expect, it } from 'vitest';
import { NS_PER_MS } from '@lockfabric/ports';
import { WordLayout, formatCounters } from '../../src/index.js';
import type { Counters } from '../../src/index.js';
import { Scenario } from '../support/scenario.js';
import type { HoldOutcome, Options } from '../support/scenario.js';

const standard = WordLayout.of('standard');
const c = (nX: number, nS: number, maxX: number, maxS: number): Counters => ({ nX, nS, nU: 0, maxX, maxS, maxU: 0 });
const US = 1_000;

describe('A1: the paper fails a shared waiter when nS passes its ticket', () => {
  /** W holds X; A and B wait for it; B (busy polling) is granted and releases before A's next poll. */
  async function batchReaders(flags: Options) {
    const s = new Scenario({ leaseNs: 500_000, ...flags });
    const w = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 30 * US });
    const a = s.hold(s.client({ waitUnitNs: 20 * US }), { atNs: 2 * US, mode: 'shared', holdNs: 5 * US });
    const b = s.hold(s.client({ polling: 'busy' }), { atNs: 4 * US, mode: 'shared', holdNs: 1 * US });
    const next = s.hold(s.client(), { atNs: 40 * US, mode: 'exclusive', holdNs: 1 * US });
    await s.run();
    return { s, outcomes: await Promise.all([w, a, b, next]) };
  }

  it('fixed: reader A is granted although nS already counts B’s release; the next writer follows A', async () => {
    const { s, outcomes } = await batchReaders({});
    expect(outcomes.map((o) => o.granted)).toEqual([true, true, true, true]);
    expect(outcomes[3]!.grantNs!).toBeGreaterThan(outcomes[1]!.releasedNs! - 3 * US);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal: A is failed, never releases its slot, and the next writer stalls 2λ and aborts too', async () => {
    const { outcomes } = await batchReaders({ paperLiteralSharedCheck: true });
    expect(outcomes[1]).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(outcomes[3]).toMatchObject({ granted: false, error: 'LockAbortedError' });
  });
});

describe('A2: the paper’s shared skip counts earlier readers as released', () => {
  /** A dead writer; reader A (long lease) and reader B (short lease) wait; then writer X2. B skips. */
  async function sharedSkip(flags: Options) {
    const s = new Scenario({ leaseNs: 10_000_000, ...flags });
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity, unrecorded: true });
    const a = s.hold(s.client(), { atNs: 2 * US, mode: 'shared', holdNs: 50 * US });
    const b = s.hold(s.client({ leaseNs: 100_000 }), { atNs: 4 * US, mode: 'shared', holdNs: 1 * US });
    const x2 = s.hold(s.client(), { atNs: 6 * US, mode: 'exclusive', holdNs: 10 * US });
    await s.run(50 * NS_PER_MS);
    return { s, outcomes: await Promise.all([a, b, x2]) };
  }

  it('fixed: B’s skip adds only its own slot; A is granted and X2 waits for A', async () => {
    const { s, outcomes } = await sharedSkip({});
    expect(outcomes[1]).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(outcomes[0]!.granted && outcomes[2]!.granted).toBe(true);
    expect(outcomes[2]!.grantNs!).toBeGreaterThan(outcomes[0]!.releasedNs! - 3 * US);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal (with the fixed shared check): X2 is granted while A holds — an exclusion violation', async () => {
    const { s } = await sharedSkip({ paperLiteralSharedSkip: true });
    expect(s.verdict().violations.length).toBeGreaterThan(0);
  });
});

describe('A3: withdrawing a bounced ticket with FAA(−1) across a forced reset', () => {
  /**
   * A frozen word whose tickets are all dead. B1 bounces (+1 on maxX); before its withdrawal lands
   * the word is force-zeroed and C draws the first ticket of the new generation; then D asks.
   */
  async function withdrawRace(flags: Options) {
    const s = new Scenario({ counterLimit: 4, ...flags });
    s.setCounters(c(0, 0, 4, 0));
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 1 * US, unrecorded: true });
    const zero = s.at(1_500, async () => s.ports().verbs.cas(s.addr(0), standard.encode(c(0, 0, 5, 0)), 0n));
    const cHold = s.hold(s.client(), { atNs: 2_000, mode: 'exclusive', holdNs: 50 * US });
    const dHold = s.hold(s.client(), { atNs: 10 * US, mode: 'exclusive', holdNs: 10 * US });
    let afterRace = '';
    s.at(6 * US, async () => {
      afterRace = formatCounters(s.counters(), standard);
    });
    await s.run(10 * NS_PER_MS);
    return { s, zeroed: (await zero) === standard.encode(c(0, 0, 5, 0)), afterRace, outcomes: await Promise.all([cHold, dHold]) };
  }

  it('fixed: the CAS withdrawal sees the reset and stops; D waits for C', async () => {
    const { s, zeroed, afterRace, outcomes } = await withdrawRace({});
    expect(zeroed).toBe(true);
    expect(afterRace).toBe('{0,0,1,0}');
    expect(outcomes.every((o) => o.granted)).toBe(true);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal: the FAA(−1) erases C’s ticket and D is granted alongside C', async () => {
    const { s, zeroed, afterRace } = await withdrawRace({ paperLiteralFaaWithdraw: true });
    expect(zeroed).toBe(true);
    expect(afterRace).toBe('{0,0,0,0}');
    expect(s.verdict().violations.length).toBeGreaterThan(0);
  });

  it('paper-literal on an empty new generation: the FAA(−1) borrows through every field', async () => {
    const s = new Scenario({ counterLimit: 4, paperLiteralFaaWithdraw: true });
    s.setCounters(c(0, 0, 4, 0));
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 1 * US, unrecorded: true });
    s.at(1_500, async () => s.ports().verbs.cas(s.addr(0), standard.encode(c(0, 0, 5, 0)), 0n));
    let afterRace = '';
    s.at(6 * US, async () => {
      afterRace = formatCounters(s.counters(), standard);
    });
    await s.run(1 * NS_PER_MS);
    expect(afterRace).toBe('{65535,65535,65535,0}');
  });
});

describe('A4: the paper zeroes the word after any skip on a frozen word', () => {
  /** counterLimit 4: H (dead), X1 (short lease, skips H), X2 (busy polling), X3 (the resetter); Y arrives while frozen. */
  async function zeroAfterSkip(flags: Options) {
    const s = new Scenario({ counterLimit: 4, leaseNs: 10_000_000, ...flags });
    s.setCounters(c(0, 0, 0, 0));
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity, unrecorded: true });
    const x1 = s.hold(s.client({ leaseNs: 100_000 }), { atNs: 1 * US, mode: 'exclusive', holdNs: 1 * US });
    const x2 = s.hold(s.client({ polling: 'busy' }), { atNs: 2 * US, mode: 'exclusive', holdNs: 200 * US });
    const x3 = s.hold(s.client(), { atNs: 3 * US, mode: 'exclusive', holdNs: 1 * US });
    const ys = [150, 160, 170].map((atUs) => s.hold(s.client(), { atNs: atUs * US, mode: 'exclusive', holdNs: 5 * US }));
    await s.run(100 * NS_PER_MS);
    return { s, outcomes: await Promise.all([x1, x2, x3, ...ys]) };
  }

  it('fixed: no zero after X1’s skip; X2 and the resetter X3 are served, X3 zeroes the word, then Y', async () => {
    const { s, outcomes } = await zeroAfterSkip({});
    expect(outcomes[0]).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(outcomes.slice(1).every((o) => o.granted)).toBe(true);
    expect(outcomes[2]!.grant!.resetFrom).toBeDefined();
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal: X2 is granted by the skip, the zero starts a new generation under it, and a Y overlaps X2', async () => {
    const { s } = await zeroAfterSkip({ paperLiteralZeroAfterSkip: true });
    expect(s.verdict().violations.length).toBeGreaterThan(0);
  });
});

describe('A5: the resetter releases with FAA after its lease ran out', () => {
  /**
   * The resetter R holds far past its lease; bouncer W (short lease) force-resets the frozen word;
   * C and then D use the new generation while R's late release lands.
   */
  async function lateResetter(flags: Options) {
    const s = new Scenario({ counterLimit: 4, leaseNs: 10_000_000, ...flags });
    s.setCounters(c(3, 0, 3, 0));
    const r = s.hold(s.client({ leaseNs: 100_000 }), { atNs: 0, mode: 'exclusive', holdNs: 400 * US, unrecorded: true });
    const w = s.hold(s.client({ leaseNs: 100_000, backoffCapNs: 20 * US }), { atNs: 10 * US, mode: 'exclusive', holdNs: 1 * US });
    const cHold = s.hold(s.client(), { atNs: 300 * US, mode: 'exclusive', holdNs: 300 * US });
    const dHold = s.hold(s.client(), { atNs: 450 * US, mode: 'exclusive', holdNs: 10 * US });
    await s.run(5 * NS_PER_MS);
    return { s, r, outcomes: await Promise.all([w, cHold, dHold]) };
  }

  it('fixed: R’s late release finds the word reset and is dropped (LeaseExpiredError); D waits for C', async () => {
    const { s, r, outcomes } = await lateResetter({});
    expect(outcomes.every((o) => o.granted)).toBe(true);
    expect((await r).releaseError).toBe('LeaseExpiredError');
    expect(outcomes[2]!.grantNs!).toBeGreaterThan(outcomes[1]!.releasedNs! - 3 * US);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal: R’s FAA lands on the new generation, D is granted while C holds, and R’s CAS loop never ends', async () => {
    const { s, r } = await lateResetter({ paperLiteralResetterRelease: true });
    expect(s.verdict().violations.length).toBeGreaterThan(0);
    let settled = false;
    void r.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
  });
});

describe('A6: "nX or nS have not changed" read as either counter', () => {
  /** A reader behind three writers, each holding 0.8λ: nS stands still for 2.4λ while nX moves. */
  async function writerChain(flags: Options) {
    const s = new Scenario({ leaseNs: 100_000, ...flags });
    const writers = [0, 1, 2].map((i) => s.hold(s.client(), { atNs: i * US, mode: 'exclusive', holdNs: 80 * US }));
    const reader = s.hold(s.client(), { atNs: 3 * US, mode: 'shared', holdNs: 5 * US });
    const slowReader = s.hold(s.client({ leaseNs: 10_000_000 }), { atNs: 4 * US, mode: 'shared', holdNs: 5 * US });
    await s.run(50 * NS_PER_MS);
    return { s, outcomes: await Promise.all([...writers, reader, slowReader]) };
  }

  it('fixed: every change restarts the stall timer; everyone is served in order', async () => {
    const { s, outcomes } = await writerChain({});
    expect(outcomes.every((o: HoldOutcome) => o.granted)).toBe(true);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal: the reader skips the live third writer and the next reader overlaps it', async () => {
    const { s } = await writerChain({ paperLiteralStallOnEither: true });
    expect(s.verdict().violations.length).toBeGreaterThan(0);
  });
});

describe('A9: multi-slot leases need a stall threshold scaled by the slots ahead', () => {
  /** H holds 8 slots (lease 8λ) for 5λ; W (one slot) and W2 wait behind it. */
  async function longHolder(flags: Options) {
    const s = new Scenario({ leaseNs: 100_000, maxSlots: 8, ...flags });
    const h = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 500 * US, acquire: { slots: 8 } });
    const w = s.hold(s.client(), { atNs: 1 * US, mode: 'exclusive', holdNs: 5 * US });
    const w2 = s.hold(s.client({ leaseNs: 10_000_000 }), { atNs: 2 * US, mode: 'exclusive', holdNs: 5 * US });
    await s.run(50 * NS_PER_MS);
    return { s, outcomes: await Promise.all([h, w, w2]) };
  }

  it('fixed: the threshold 2λ·δ covers the 8-slot lease; W and W2 follow H', async () => {
    const { s, outcomes } = await longHolder({});
    expect(outcomes.every((o) => o.granted)).toBe(true);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal (fixed 2λ): W skips H inside its lease and W2 overlaps H', async () => {
    const { s } = await longHolder({ paperLiteralFixedStallThreshold: true });
    expect(s.verdict().violations.length).toBeGreaterThan(0);
  });

  it('a dead 8-slot holder is not skipped at 3λ but after 2λ·8 of silence (spec scenario 10)', async () => {
    const s = new Scenario({ leaseNs: 100_000, maxSlots: 8 });
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity, unrecorded: true, acquire: { slots: 8 } });
    const w = s.hold(s.client(), { atNs: 1 * US, mode: 'exclusive', holdNs: 5 * US });
    let at3Lambda = '';
    s.at(300 * US, async () => {
      at3Lambda = formatCounters(s.counters(), standard);
    });
    await s.run();
    const skipper = await w;
    expect(at3Lambda).toBe('{0,0,9,0}');
    expect(skipper).toMatchObject({ granted: false, error: 'LockAbortedError' });
    const failedAt = s.history.events()[1]!.timeNs;
    expect(failedAt).toBeGreaterThan(1_600 * US);
    expect(formatCounters(s.counters(), standard)).toBe('{9,0,9,0}');
  });
});

describe('A10: the paper names the resetter only when prev(max) == COUNT_MAX−1', () => {
  /** counterLimit 8, maxS at 6: a 4-slot reader jumps over 7 to 10. */
  async function jumpOver(flags: Options) {
    const s = new Scenario({ counterLimit: 8, maxSlots: 4, leaseNs: 100_000, ...flags });
    s.setCounters(c(0, 6, 0, 6));
    const reader = s.hold(s.client(), { atNs: 0, mode: 'shared', holdNs: 10 * US, acquire: { slots: 4 } });
    const late = s.hold(s.client(), { atNs: 40 * US, mode: 'exclusive', holdNs: 1 * US });
    let afterRelease = '';
    s.at(30 * US, async () => {
      afterRelease = formatCounters(s.counters(), standard);
    });
    await s.run(50 * NS_PER_MS);
    return { s, afterRelease, outcomes: await Promise.all([reader, late]) };
  }

  it('fixed: the crossing ticket is the resetter; the word is 0 right after its release', async () => {
    const { afterRelease, outcomes } = await jumpOver({});
    expect(outcomes[0]!.grant!.resetFrom).toBe(standard.encode(c(0, 10, 0, 10)));
    expect(afterRelease).toBe('{0,0,0,0}');
    expect(outcomes[1]!.grantNs!).toBeLessThan(100 * US);
  });

  it('paper-literal: nobody resets; the drained word stays frozen until a bouncer’s 2λ watchdog zeroes it', async () => {
    const { afterRelease, outcomes } = await jumpOver({ paperLiteralResetterTest: true });
    expect(outcomes[0]!.grant!.resetFrom).toBeUndefined();
    expect(afterRelease).toBe('{0,10,0,10}');
    expect(outcomes[1]!.granted).toBe(true);
    expect(outcomes[1]!.grantNs!).toBeGreaterThan(40 * US + 200 * US);
  });
});

describe('A11: a bounce off a frozen word', () => {
  it('retries the lock after the backoff by default; fails the acquire paper-literally', async () => {
    for (const [flags, expected] of [
      [{}, { granted: true }],
      [{ paperLiteralAbortOnBounce: true }, { granted: false, error: 'LockAbortedError' }],
    ] as const) {
      const s = new Scenario({ counterLimit: 4, ...flags });
      s.setCounters(c(3, 0, 3, 0));
      s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 20 * US });
      const bouncer = s.hold(s.client(), { atNs: 5 * US, mode: 'exclusive', holdNs: 1 * US });
      await s.run();
      expect(await bouncer).toMatchObject(expected);
    }
  });
});

describe('A16: a waiter that gives up cannot withdraw its ticket', () => {
  /** H holds 300 µs; W1 times out after 50 µs; W2 waits behind W1's ticket. λ = 1 ms. */
  async function timedOut(flags: Options) {
    const s = new Scenario({ leaseNs: 1_000_000, ...flags });
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 300 * US });
    const w1 = s.hold(s.client(), { atNs: 1 * US, mode: 'exclusive', holdNs: 1 * US, acquire: { timeoutMs: 0.05 } });
    const w2 = s.hold(s.client(), { atNs: 2 * US, mode: 'exclusive', holdNs: 1 * US });
    await s.run();
    return { s, outcomes: await Promise.all([w1, w2]) };
  }

  it('fixed: the timed-out ticket is released as soon as it is granted; W2 follows at once', async () => {
    const { s, outcomes } = await timedOut({});
    expect(outcomes[0]).toMatchObject({ granted: false, error: 'LockTimeoutError' });
    expect(outcomes[1]!.granted).toBe(true);
    expect(outcomes[1]!.grantNs!).toBeLessThan(330 * US);
    expect(s.verdict().ok).toBe(true);
  });

  it('paper-literal: the abandoned ticket stalls W2 for 2λ, which then skips it and aborts', async () => {
    const { outcomes } = await timedOut({ paperLiteralAbandonTicket: true });
    expect(outcomes[1]).toMatchObject({ granted: false, error: 'LockAbortedError' });
  });
});
