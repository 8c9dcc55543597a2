import { checkHistory } from './verdict.js';
import type { HistoryEvent } from './history.js';
import { describe, expect, it } from 'vitest';
import { clipExpiredLeases } from './lease-safety.js';

const LEASE = 100;
const ev = (client: string, op: 'acquire' | 'release', phase: 'invoke' | 'ok' | 'fail', timeNs: number, error?: string): HistoryEvent => ({
  client,
  lock: 0,
  mode: 'exclusive',
  op,
  phase,
  timeNs,
  ...(error ? { error } : {}),
});

/** B is paused holding lock 0 past its lease; A takes the lock after the lease; B's release comes late. */
function pausedHolder(lateRelease: 'fenced' | 'succeeded'): HistoryEvent[] {
  return [
    ev('1/0', 'acquire', 'invoke', 0),
    ev('1/0', 'acquire', 'ok', 10),
    ev('0/0', 'acquire', 'invoke', 20),
    ev('0/0', 'acquire', 'ok', 250),
    ev('0/0', 'release', 'invoke', 260),
    ev('0/0', 'release', 'ok', 270),
    ev('1/0', 'release', 'invoke', 900),
    lateRelease === 'fenced' ? ev('1/0', 'release', 'fail', 901, 'LeaseExpiredError') : ev('1/0', 'release', 'ok', 901),
  ];
}

describe('clipExpiredLeases', () => {
  it('a fenced late release ends the hold at its lease: the history passes', () => {
    const raw = pausedHolder('fenced');
    expect(checkHistory(raw).ok).toBe(false);
    const clipped = clipExpiredLeases(raw, LEASE);
    expect(clipped[6]).toMatchObject({ op: 'release', phase: 'invoke', timeNs: 110 });
    expect(checkHistory(clipped).ok).toBe(true);
  });

  it('a late release that succeeded (an unfenced holder, the mutant) is a violation', () => {
    const verdict = checkHistory(clipExpiredLeases(pausedHolder('succeeded'), LEASE));
    expect(verdict.ok).toBe(false);
    expect(verdict.violations[0]?.first.client).toBe('1/0');
  });

  it('a fenced hold is judged for the protected part of its lease only', () => {
    // With nothing guaranteed after the ok (a grant seen after a pause), the fenced hold protects nothing.
    expect(clipExpiredLeases(pausedHolder('fenced'), 0)[6]).toMatchObject({ timeNs: 10 });
    expect(checkHistory(clipExpiredLeases(pausedHolder('succeeded'), 0)).ok).toBe(false);
  });

  it('a fenced release whose overlap lies inside the protected lease is still a violation', () => {
    const raw = pausedHolder('fenced').map((e) => (e.client === '0/0' && e.timeNs === 250 ? { ...e, timeNs: 50 } : e));
    expect(checkHistory(clipExpiredLeases(raw, LEASE)).ok).toBe(false);
  });

  it('leaves releases inside the lease and other errors alone', () => {
    const history = [ev('1/0', 'acquire', 'invoke', 0), ev('1/0', 'acquire', 'ok', 10), ev('1/0', 'release', 'invoke', 500), ev('1/0', 'release', 'fail', 501, 'FabricAccessError')];
    expect(clipExpiredLeases(history, LEASE)).toStrictEqual(history);
  });
});
