import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { randomHistory } from '../tests/support/random-history.js';
import { HistoryColumns } from './columns.js';
import { HistoryRecorder } from './history.js';
import { checkHistory, summarizeVerdict } from './verdict.js';

describe('checkHistory', () => {
  it('passes a correct history and summarises it', () => {
    const events = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 20).hold('0/2', 1, 'shared', 30, 40).hold('0/3', 1, 'shared', 35, 45).build();
    const verdict = checkHistory(events, { fifo: true });
    expect(verdict.ok).toBe(true);
    expect(verdict.stats).toEqual({ events: 12, clients: 3, locks: 1, firstNs: 9, lastNs: 46, holds: 3, unreleasedHolds: 0 });
    expect(verdict.fifo?.ok).toBe(true);
    expect(summarizeVerdict(verdict).split('\n')[0]).toBe('PASS: 12 events, 3 clients, 1 locks, 3 holds over 37 ns');
  });

  it('fails on an exclusion violation, a liveness violation or a FIFO overtake, each on its own', () => {
    const overlap = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 30).hold('0/2', 1, 'exclusive', 20, 40).build();
    const exclusion = checkHistory(overlap);
    expect(exclusion.ok).toBe(false);
    expect(exclusion.violations).toHaveLength(1);
    expect(exclusion.liveness.ok).toBe(true);
    expect(summarizeVerdict(exclusion)).toMatch(/^FAIL[\s\S]*exclusion: 1 violations[\s\S]*lock 1: 0\/2 exclusive/);

    const incomplete = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 30).event('0/2', 'acquire', 1, 'shared', 'invoke', 5).build();
    const liveness = checkHistory(incomplete);
    expect([liveness.ok, liveness.exclusion.ok, liveness.liveness.ok]).toEqual([false, true, false]);
    expect(summarizeVerdict(liveness)).toContain('acquire-incomplete: 0/2');
    expect(checkHistory(incomplete, { failedClients: { '0/2': 50 } }).ok).toBe(true);

    const unfairOnly = new HistoryBuilder().acquireFails('0/1', 1, 'exclusive', 0, 100).hold('0/2', 1, 'exclusive', 50, 60).build();
    expect(checkHistory(unfairOnly).ok).toBe(true);
    const fifo = checkHistory(unfairOnly, { fifo: { maxBypass: 0 } });
    expect(fifo.ok).toBe(false);
    expect(summarizeVerdict(fifo)).toContain('fifo (bypass ≤ 0, slack 0 ns): 1 violations');
  });

  it('checks a 100 000-event random correct history', () => {
    const events = randomHistory({ seed: 7, clients: 64, locks: 32, opsPerClient: 391 });
    expect(events.length).toBeGreaterThanOrEqual(100_000);
    const recorder = new HistoryRecorder();
    for (const event of events) recorder.append(event);
    const verdict = checkHistory(recorder.events(), { fifo: { slackNs: 50 }, maxWaitNs: 1e9 });
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    expect(verdict.stats.holds).toBe(64 * 391);
  });

  it('gives the same verdict for events, a recorder, prepared columns and a shuffled copy', () => {
    // Per-client times strictly increase in this model, so any shuffle has one time order.
    const events = randomHistory({ seed: 8, clients: 8, locks: 2, opsPerClient: 40, policy: 'random' });
    const recorder = new HistoryRecorder();
    for (const event of events) recorder.append(event);
    const shuffled = events.slice().reverse();
    const options = { fifo: { slackNs: 50 } };
    const expected = checkHistory(events, options);
    expect(expected.fifo?.ok).toBe(false);
    for (const input of [recorder, HistoryColumns.from(events), shuffled]) {
      const verdict = checkHistory(input, options);
      expect(verdict.ok).toBe(expected.ok);
      expect([verdict.exclusion.ok, verdict.liveness.ok]).toEqual([true, true]);
      expect(verdict.stats).toEqual(expected.stats);
      expect(verdict.fifo?.totalOvertakes).toBe(expected.fifo?.totalOvertakes);
    }
  });
});
