/**
 * A holder paused past its lease (SIGSTOP, then SIGCONT) must be harmless when it comes back
 * (a live failure): its release, decided inside the lease but sent after the pause, must not land on the
 * tickets of the waiters that skipped it; a waiter paused across its grant must not use the grant.
 */
import { describe, expect, it } from 'vitest';
import { WordLayout, formatCounters } from '../../src/index.js';
import { Scenario } from '../support/scenario.js';
import type { Options } from '../support/scenario.js';

const US = 1_000;
const LAMBDA = 100 * US;
const standard = WordLayout.of('standard');

/**
 * P takes X at 0 and decides to release at 50 µs, inside its lease, but its process stops before
 * the verb leaves and resumes at 250 µs. W1 (X) skips P after 2λ of silence and restarts nothing;
 * H (X) is granted after the skip and holds 80 µs; R (S) queues behind H.
 */
async function pausedRelease(options: Options) {
  const s = new Scenario({ leaseNs: LAMBDA, ...options });
  const paused = s.pausedClient([{ fromNs: 50 * US + 1, toNs: 250 * US }], 20 * US);
  const p = s.hold(paused, { atNs: 0, mode: 'exclusive', holdNs: 50 * US });
  const w1 = s.hold(s.client(), { atNs: 1 * US, mode: 'exclusive', holdNs: 5 * US });
  const h = s.hold(s.client(), { atNs: 2 * US, mode: 'exclusive', holdNs: 80 * US });
  const r = s.hold(s.client(), { atNs: 3 * US, mode: 'shared', holdNs: 5 * US });
  await s.run();
  return { s, outcomes: await Promise.all([p, w1, h, r]) };
}

describe('dslr: a holder paused past its lease', () => {
  it('its late release is fenced (LeaseExpiredError, nothing written) and nobody overlaps', async () => {
    const { s, outcomes } = await pausedRelease({});
    const [p, w1, h, r] = outcomes;
    expect(p.releaseError).toBe('LeaseExpiredError');
    expect(w1).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(h.granted).toBe(true);
    expect(h.grantNs!).toBeLessThan(250 * US);
    expect(h.releasedNs!).toBeGreaterThan(250 * US);
    // R waits for H's release, not for P's late one.
    expect(r.grantNs!).toBeGreaterThanOrEqual(h.releasedNs!);
    expect(s.verdict().ok).toBe(true);
    // P's ticket was consumed by W1's skip; nothing of P's landed afterwards.
    expect(formatCounters(s.counters(), standard)).toBe('{3,1,3,1}');
  });

  it('with the paper’s FAA release the late release grants R while H holds (the bug of the live pause test)', async () => {
    const { s, outcomes } = await pausedRelease({ paperLiteralFaaRelease: true });
    const [p, , h, r] = outcomes;
    expect(p.releaseError).toBeUndefined();
    expect(r.grantNs!).toBeLessThan(h.releasedNs!);
    expect(s.verdict().exclusion.violationCount).toBeGreaterThan(0);
  });

  it('a client paused across its grant gets no grant whose lease is already over, and hands the ticket back', async () => {
    const s = new Scenario({ leaseNs: LAMBDA });
    // The acquiring FAA leaves before the stop and grants at once; the process sees its answer 3λ later.
    const waiter = s.pausedClient([{ fromNs: 100 * US + 1, toNs: 400 * US }], 0);
    const w = s.hold(waiter, { atNs: 100 * US, mode: 'exclusive', holdNs: 5 * US });
    const later = s.hold(s.client({ restartOnAbort: true }), { atNs: 150 * US, mode: 'exclusive', holdNs: 5 * US });
    await s.run();
    const [a, b] = await Promise.all([w, later]);
    expect(a).toMatchObject({ granted: false, error: 'LockAbortedError' });
    expect(b.granted).toBe(true);
    expect(b.releaseError).toBeUndefined();
    expect(s.verdict().ok).toBe(true);
    const end = s.counters();
    expect(end.nX).toBe(end.maxX);
  });
});
