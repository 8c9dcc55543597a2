import { describe, expect, it } from 'vitest';
import { clipFencedHolds, FENCED_ERROR } from './fenced-holds.js';
import type { HistoryEvent } from './history.js';
import { checkHistory, summarizeVerdict } from './verdict.js';

const MS = 1_000_000;

/** compute-2 (client 2/0) holds lock 0 from `okMs` to 50 ms and is fenced at 20 ms; compute-1 holds it from 30 ms. */
function lateHoldHistory(okMs: number, release: 'fail' | 'ok'): HistoryEvent[] {
  const ev = (client: string, op: 'acquire' | 'release', phase: 'invoke' | 'ok' | 'fail', ms: number, error?: string): HistoryEvent => ({ client, lock: 0, mode: 'exclusive', op, phase, timeNs: ms * MS, ...(error ? { error } : {}) });
  return [
    ev('2/0', 'acquire', 'invoke', 0),
    ev('1/0', 'acquire', 'invoke', 2),
    ev('1/0', 'acquire', 'ok', 30),
    ev('2/0', 'acquire', 'ok', okMs),
    ev('2/0', 'release', 'invoke', 50),
    ev('2/0', 'release', release, 51, release === 'fail' ? FENCED_ERROR : undefined),
    ev('1/0', 'release', 'invoke', 60),
    ev('1/0', 'release', 'ok', 61),
  ].sort((a, b) => a.timeNs - b.timeNs);
}

describe('clipFencedHolds', () => {
  it('is not a blanket pardon: an unfenced late release still shows as an overlap', () => {
    expect(checkHistory(clipFencedHolds(lateHoldHistory(1, 'fail'), 2, 20 * MS)).ok).toBe(true);
    expect(checkHistory(clipFencedHolds(lateHoldHistory(1, 'ok'), 2, 20 * MS)).ok).toBe(false);
    // Another node's fence pardons nothing.
    expect(checkHistory(clipFencedHolds(lateHoldHistory(1, 'fail'), 3, 20 * MS)).ok).toBe(false);
  });

  it('a grant that reached the paused client only after the fence protected nothing; an accepted release of it still shows', () => {
    const clipped = clipFencedHolds(lateHoldHistory(40, 'fail'), 2, 20 * MS);
    expect(checkHistory(clipped).ok, summarizeVerdict(checkHistory(clipped))).toBe(true);
    expect(clipped.filter((e) => e.client === '2/0').map((e) => `${e.op} ${e.phase}`)).toStrictEqual(['acquire invoke', 'acquire fail']);
    expect(checkHistory(clipFencedHolds(lateHoldHistory(40, 'ok'), 2, 20 * MS)).ok).toBe(false);
  });
});
