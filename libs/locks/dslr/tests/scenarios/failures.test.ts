/** Failure handling (spec §8, §7.5, §14.4 scenarios 7 and 8): leases, skips and forced resets. */
import { describe, expect, it } from 'vitest';
import { WordLayout, formatCounters } from '../../src/index.js';
import type { Counters } from '../../src/index.js';
import { Scenario } from '../support/scenario.js';
import type { Options } from '../support/scenario.js';

const standard = WordLayout.of('standard');
const c = (nX: number, nS: number, maxX: number, maxS: number): Counters => ({ nX, nS, nU: 0, maxX, maxS, maxU: 0 });
const US = 1_000;
const LAMBDA = 100 * US;

describe('dslr: crashed holders (scenario 7)', () => {
  it('a crashed writer, then a crashed reader: each is skipped about 2λ after the counters last moved', async () => {
    const s = new Scenario({ leaseNs: LAMBDA });
    const deadWriter = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity });
    const reader = s.hold(s.client(), { atNs: 1 * US, mode: 'shared', holdNs: 5 * US });
    const writer = s.hold(s.client(), { atNs: 2 * US, mode: 'exclusive', holdNs: 5 * US });
    const deadReader = s.hold(s.client(), { atNs: 400 * US, mode: 'shared', holdNs: Infinity });
    const w4 = s.hold(s.client(), { atNs: 401 * US, mode: 'exclusive', holdNs: 5 * US });
    const w5 = s.hold(s.client(), { atNs: 402 * US, mode: 'exclusive', holdNs: 5 * US });
    await s.run();
    const [h, r, w, dr, x4, x5] = await Promise.all([deadWriter, reader, writer, deadReader, w4, w5]);
    // the reader's timer fires first: it skips the dead writer and restarts; the writer behind it goes on
    expect(r).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(w.granted).toBe(true);
    expect(w.grantNs! - h.grantNs!).toBeGreaterThan(2 * LAMBDA);
    expect(w.grantNs! - h.grantNs!).toBeLessThan(2 * LAMBDA + LAMBDA / 2 + 10 * US);
    expect(dr.granted).toBe(true);
    expect(x4).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(x5.granted).toBe(true);
    expect(x5.grantNs! - dr.grantNs!).toBeLessThan(2 * LAMBDA + LAMBDA / 2 + 10 * US);
    const failed = { [h.client]: h.grantNs! + 1, [dr.client]: dr.grantNs! + 1 };
    expect(s.verdict(failed).ok).toBe(true);
  });

  it('a holder past its lease does not release (LeaseExpiredError) and is skipped', async () => {
    const s = new Scenario({ leaseNs: LAMBDA });
    const slow = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: 2 * LAMBDA });
    const next = s.hold(s.client(), { atNs: 1 * US, mode: 'exclusive', holdNs: 1 * US });
    const third = s.hold(s.client(), { atNs: 300 * US, mode: 'exclusive', holdNs: 1 * US });
    await s.run();
    const [a, b, t] = await Promise.all([slow, next, third]);
    expect(a.releaseError).toBe('LeaseExpiredError');
    expect(b).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(t.granted).toBe(true);
    expect(formatCounters(s.counters(), standard)).toBe('{3,0,3,0}');
  });
});

describe('dslr: a frozen word whose resetter crashed (scenario 8)', () => {
  it('bouncers zero it about 2λ after the counters stopped and the next generation works', async () => {
    const s = new Scenario({ counterLimit: 4, leaseNs: LAMBDA, backoffCapNs: 20 * US });
    s.setCounters(c(3, 0, 3, 0));
    const resetter = s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity });
    const bouncers = [5, 6, 7].map((atUs) => s.hold(s.client(), { atNs: atUs * US, mode: 'exclusive', holdNs: 2 * US }));
    await s.run();
    const dead = await resetter;
    expect(dead.grant!.resetFrom).toBe(standard.encode(c(4, 0, 4, 0)));
    const served = await Promise.all(bouncers);
    expect(served.every((o) => o.granted)).toBe(true);
    const first = Math.min(...served.map((o) => o.grantNs!));
    expect(first).toBeGreaterThan(2 * LAMBDA);
    expect(first).toBeLessThan(2 * LAMBDA + 100 * US);
    expect(formatCounters(s.counters(), standard)).toBe('{3,0,3,0}');
    expect(s.verdict({ [dead.client]: dead.grantNs! + 1 }).ok).toBe(true);
  });
});

describe('dslr: the generation check (mutant)', () => {
  /** Waiters of a frozen generation are wiped by the bouncers' forced reset; C then uses the new generation. */
  async function wipedWaiters(flags: Options) {
    const s = new Scenario({ counterLimit: 4, leaseNs: 10_000_000, ...flags });
    s.hold(s.client(), { atNs: 0, mode: 'exclusive', holdNs: Infinity, unrecorded: true });
    const waiters = [1, 2, 3].map((atUs) => s.hold(s.client(), { atNs: atUs * US, mode: 'exclusive', holdNs: 50 * US }));
    const b = s.hold(s.client({ leaseNs: 100_000, backoffCapNs: 20 * US }), { atNs: 10 * US, mode: 'exclusive', holdNs: 20 * US });
    const late = s.hold(s.client(), { atNs: 300 * US, mode: 'exclusive', holdNs: 50 * US });
    await s.run(10_000 * US);
    return { s, outcomes: await Promise.all([...waiters, b, late]) };
  }

  it('with it, the wiped waiters notice the reset and restart', async () => {
    const { s, outcomes } = await wipedWaiters({});
    expect(outcomes.slice(0, 3).map((o) => o.error)).toEqual(['LockAbortedError', 'LockAbortedError', 'LockAbortedError']);
    expect(s.verdict().ok).toBe(true);
  });

  it('without it, a wiped waiter is granted by the new generation alongside its holder', async () => {
    const { s } = await wipedWaiters({ mutantNoGenerationCheck: true });
    expect(s.verdict().violations.length).toBeGreaterThan(0);
  });
});
