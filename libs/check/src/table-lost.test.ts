import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { TABLE_LOST_ERROR, clipLostTableHolds } from './table-lost.js';
import { checkHistory } from './verdict.js';

/** 2/0 holds lock 0 from 10 to 50 (release refused: table lost, or accepted); 1/0 holds it from 30 on the new table. */
function history(release: 'fail' | 'ok') {
  return new HistoryBuilder()
    .acquire('2/0', 0, 'exclusive', 5, 10)
    .event('2/0', 'release', 0, 'exclusive', 'invoke', 50)
    .event('2/0', 'release', 0, 'exclusive', release, 51, release === 'fail' ? TABLE_LOST_ERROR : undefined)
    .hold('1/0', 0, 'exclusive', 30, 60)
    .build();
}

describe('clipLostTableHolds', () => {
  it('ends a hold whose table was lost at the restart, or at its grant when the restart time is unknown', () => {
    expect(checkHistory(history('fail')).ok).toBe(false);
    expect(checkHistory(clipLostTableHolds(history('fail'), 20)).ok).toBe(true);
    expect(checkHistory(clipLostTableHolds(history('fail'))).ok).toBe(true);
    // A restart after the other grant does not pardon the overlap before it.
    expect(checkHistory(clipLostTableHolds(history('fail'), 40)).ok).toBe(false);
  });

  it('leaves an accepted release alone', () => {
    expect(checkHistory(clipLostTableHolds(history('ok'))).ok).toBe(false);
  });
});
