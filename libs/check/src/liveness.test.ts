import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { randomHistory } from '../tests/support/random-history.js';
import { checkLiveness, describeLivenessViolation } from './liveness.js';
import type { LivenessViolationKind } from './liveness.js';

const kinds = (report: ReturnType<typeof checkLiveness>): LivenessViolationKind[] => report.violations.map((v) => v.kind);

describe('checkLiveness', () => {
  it('passes complete operations, including failed acquires that name an error', () => {
    const h = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 20).acquireFails('0/2', 1, 'shared', 12, 40, 'LockTimeoutError').hold('0/2', 1, 'shared', 50, 60);
    const report = checkLiveness(h.build());
    expect(report.ok).toBe(true);
    expect(report.counts).toMatchObject({
      acquiresInvoked: 3,
      acquiresOk: 2,
      acquiresFailed: 1,
      releasesInvoked: 2,
      releasesOk: 2,
      releasesFailed: 0,
      maxAcquireWaitNs: 28,
      acquireErrors: { LockTimeoutError: 1 },
    });
    expect(checkLiveness(randomHistory({ seed: 5, clients: 8, locks: 2, opsPerClient: 50 })).ok).toBe(true);
  });

  it('fails an acquire that never completes, unless its client failed', () => {
    const events = new HistoryBuilder().hold('0/1', 1, 'exclusive', 10, 20).event('0/2', 'acquire', 1, 'exclusive', 'invoke', 15).build();
    const report = checkLiveness(events);
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([
      { kind: 'acquire-incomplete', client: '0/2', lock: 1, op: 'acquire', mode: 'exclusive', timeNs: 15, detail: 'acquire never completed and its client did not fail' },
    ]);
    const excused = checkLiveness(events, { failedClients: { '0/2': 30 } });
    expect(excused.ok).toBe(true);
    expect(excused.counts.excusedPending).toBe(1);
  });

  it('fails a release that never completes', () => {
    const events = new HistoryBuilder().acquire('0/1', 1, 'exclusive', 0, 1).event('0/1', 'release', 1, 'exclusive', 'invoke', 5).build();
    expect(kinds(checkLiveness(events))).toEqual(['release-incomplete']);
  });

  it('fails an acquire slower than maxWaitNs, whether it ends in ok or fail', () => {
    const events = new HistoryBuilder().acquire('0/1', 1, 'exclusive', 0, 100).release('0/1', 1, 'exclusive', 110, 120).acquireFails('0/2', 2, 'shared', 0, 300).build();
    expect(checkLiveness(events, { maxWaitNs: 300 }).ok).toBe(true);
    const slow = checkLiveness(events, { maxWaitNs: 99 });
    expect(kinds(slow)).toEqual(['acquire-slow', 'acquire-slow']);
    expect(slow.violations[0]).toMatchObject({ client: '0/1', waitNs: 100, timeNs: 0 });
  });

  it('reports protocol errors in the history itself', () => {
    const cases: [HistoryBuilder, LivenessViolationKind][] = [
      [new HistoryBuilder().event('0/1', 'acquire', 1, 'shared', 'ok', 5).release('0/1', 1, 'shared', 6, 7), 'completion-without-invoke'],
      [new HistoryBuilder().event('0/1', 'acquire', 1, 'shared', 'invoke', 1).event('0/1', 'acquire', 1, 'shared', 'fail', 5), 'fail-without-error'],
      [new HistoryBuilder().release('0/1', 1, 'shared', 6, 7), 'release-not-held'],
      [new HistoryBuilder().hold('0/1', 1, 'shared', 1, 10).hold('0/1', 1, 'exclusive', 5, 8), 'acquire-while-held'],
      [new HistoryBuilder().acquire('0/1', 1, 'shared', 0, 1).release('0/1', 1, 'exclusive', 6, 7), 'release-mode-mismatch'],
      [
        new HistoryBuilder().event('0/1', 'acquire', 1, 'shared', 'invoke', 0).event('0/1', 'acquire', 1, 'shared', 'invoke', 1).event('0/1', 'acquire', 1, 'shared', 'fail', 2, 'X'),
        'duplicate-invoke',
      ],
    ];
    for (const [builder, kind] of cases) {
      const report = checkLiveness(builder.build(), { failedClients: { '0/1': 0 } });
      expect(report.ok, kind).toBe(false);
      expect(kinds(report), kind).toContain(kind);
      expect(report.protocolErrorCount, kind).toBeGreaterThan(0);
    }
  });

  it('describes a violation in one line', () => {
    const events = new HistoryBuilder().release('0/1', 4, 'shared', 6, 7).build();
    expect(describeLivenessViolation(checkLiveness(events).violations[0]!)).toBe(
      'release-not-held: 0/1 release shared lock 4 at 6 ns — release of a lock this client does not hold',
    );
  });
});
