import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { randomHistory } from '../tests/support/random-history.js';
import { checkExclusion, collectHolds, describeExclusionViolation } from './exclusion.js';

describe('checkExclusion', () => {
  it('passes exclusive holds one after another, including touching ones', () => {
    const h = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 20).hold('0/2', 1, 'exclusive', 20, 30).hold('0/3', 1, 'shared', 40, 50);
    const report = checkExclusion(h.build());
    expect(report).toMatchObject({ ok: true, violationCount: 0, holds: 3, unreleasedHolds: 0 });
  });

  it('passes overlapping shared holds, and overlapping exclusives on different locks', () => {
    const h = new HistoryBuilder()
      .hold('0/1', 1, 'shared', 10, 50)
      .hold('0/2', 1, 'shared', 20, 30)
      .hold('0/3', 1, 'shared', 25, 60)
      .hold('0/4', 2, 'exclusive', 10, 50)
      .hold('0/5', 3, 'exclusive', 10, 50);
    expect(checkExclusion(h.build()).ok).toBe(true);
  });

  it('fails two overlapping exclusive holds and names both', () => {
    const h = new HistoryBuilder().hold('0/1', 9, 'exclusive', 10, 30).hold('0/2', 9, 'exclusive', 29, 40);
    const report = checkExclusion(h.build());
    expect(report.ok).toBe(false);
    expect(report.violationCount).toBe(1);
    expect(report.violations[0]).toEqual({
      lock: 9,
      first: { client: '0/1', lock: 9, mode: 'exclusive', startNs: 10, endNs: 30, released: true },
      second: { client: '0/2', lock: 9, mode: 'exclusive', startNs: 29, endNs: 40, released: true },
    });
    expect(describeExclusionViolation(report.violations[0]!)).toBe('lock 9: 0/2 exclusive [29, 40) overlaps 0/1 exclusive [10, 30)');
  });

  it('fails an exclusive hold inside a shared one, and a shared one inside an exclusive one', () => {
    const inside = new HistoryBuilder().hold('0/1', 1, 'shared', 10, 100).hold('0/2', 1, 'shared', 20, 30).hold('0/3', 1, 'exclusive', 40, 50);
    const report = checkExclusion(inside.build());
    expect(report.violationCount).toBe(1);
    expect(report.violations[0]?.first.client).toBe('0/1');
    expect(report.violations[0]?.second.client).toBe('0/3');

    const reverse = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 100).hold('0/2', 1, 'shared', 40, 50);
    expect(checkExclusion(reverse.build()).violations[0]?.second).toMatchObject({ client: '0/2', mode: 'shared' });
  });

  it('catches a conflict with a hold that started long before (not only with the previous one)', () => {
    const h = new HistoryBuilder().hold('0/1', 1, 'exclusive', 0, 1000).hold('0/2', 1, 'shared', 10, 20).hold('0/3', 1, 'shared', 30, 40);
    const report = checkExclusion(h.build());
    expect(report.violationCount).toBe(2);
    expect(report.violations.map((v) => v.first.client)).toEqual(['0/1', '0/1']);
  });

  it('extends an unreleased hold to infinity unless its client failed', () => {
    const h = new HistoryBuilder().acquire('0/1', 1, 'exclusive', 0, 10).hold('0/2', 1, 'exclusive', 500, 600);
    const events = h.build();
    const open = checkExclusion(events);
    expect(open.ok).toBe(false);
    expect(open.unreleasedHolds).toBe(1);
    expect(open.violations[0]?.first).toMatchObject({ client: '0/1', endNs: Number.POSITIVE_INFINITY, released: false });
    expect(describeExclusionViolation(open.violations[0]!)).toContain('∞');

    expect(checkExclusion(events, { failedClients: new Map([['0/1', 100]]) }).ok).toBe(true);
    expect(checkExclusion(events, { failedClients: { '0/1': 100 } }).ok).toBe(true);
    // A lease that outlives the failure keeps the lock held until it expires.
    const leased = checkExclusion(events, { failedClients: { '0/1': 100 }, holdEndForFailedClient: (hold) => hold.startNs + 1000 });
    expect(leased.ok).toBe(false);
    expect(leased.violations[0]?.first.endNs).toBe(1010);
  });

  it('pairs releases with the matching hold of the same client and lock', () => {
    const h = new HistoryBuilder()
      .acquire('0/1', 1, 'exclusive', 0, 1)
      .acquire('0/1', 2, 'exclusive', 2, 3)
      .release('0/1', 2, 'exclusive', 10, 11)
      .release('0/1', 1, 'exclusive', 20, 21)
      .hold('0/2', 2, 'exclusive', 12, 15);
    expect(collectHolds(h.build()).map((x) => [x.lock, x.startNs, x.endNs])).toEqual([
      [1, 1, 20],
      [2, 3, 10],
      [2, 12, 15],
    ]);
    expect(checkExclusion(h.build()).ok).toBe(true);
  });

  it('gives the same answer for a shuffled history', () => {
    const h = new HistoryBuilder().hold('0/1', 9, 'exclusive', 10, 30).hold('0/2', 9, 'exclusive', 29, 40).build();
    expect(checkExclusion(h.slice().reverse()).violationCount).toBe(1);
  });

  it('passes a random history of a correct lock and fails one of a lock that ignores holders', () => {
    for (const seed of [1, 2, 3]) {
      expect(checkExclusion(randomHistory({ seed, clients: 16, locks: 4, opsPerClient: 100, policy: 'fifo' })).ok).toBe(true);
      expect(checkExclusion(randomHistory({ seed, clients: 16, locks: 4, opsPerClient: 100, policy: 'random' })).ok).toBe(true);
      const broken = checkExclusion(randomHistory({ seed, clients: 16, locks: 4, opsPerClient: 100, policy: 'broken' }));
      expect(broken.ok).toBe(false);
      expect(broken.violationCount).toBeGreaterThan(broken.violations.length - 1);
    }
  });

  it('lists at most maxViolations but counts them all', () => {
    const h = new HistoryBuilder();
    for (let i = 0; i < 10; i++) h.hold(`0/${i}`, 1, 'exclusive', 10 + i, 100);
    const report = checkExclusion(h.build(), { maxViolations: 3 });
    expect(report.violationCount).toBe(9);
    expect(report.violations).toHaveLength(3);
  });
});
