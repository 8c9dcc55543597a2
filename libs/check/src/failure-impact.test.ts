import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { failureImpact } from './failure-impact.js';

const victim = (client: string) => client.startsWith('2/');

describe('failureImpact', () => {
  it('counts the victim’s unfinished operations as unknown and times the survivors’ first grant of each lock it held or waited for', () => {
    const h = new HistoryBuilder()
      .hold('2/0', 7, 'exclusive', 10, 20) // released before the failure: not affected
      .acquire('2/0', 1, 'exclusive', 30, 40) // held at the failure (t = 100)
      .event('2/1', 'acquire', 2, 'exclusive', 'invoke', 50) // waiting at the failure
      .acquire('2/2', 3, 'shared', 55, 60)
      .event('2/2', 'release', 3, 'shared', 'invoke', 90) // release in flight: unknown, no longer held
      .acquire('1/0', 1, 'exclusive', 95, 400) // waited through the failure
      .acquire('1/1', 2, 'exclusive', 150, 250)
      .build();
    const impact = failureImpact(h, victim, 100);
    expect(impact).toStrictEqual({ unknownOps: 2, affectedLocks: [1, 2], recoveredLocks: 2, unrecoveredLocks: [], recoveryNs: 300 });
  });

  it('lists a lock a survivor asked for after the failure and never got', () => {
    const h = new HistoryBuilder()
      .acquire('2/0', 4, 'exclusive', 10, 20)
      .acquire('2/1', 5, 'exclusive', 10, 20)
      .event('1/0', 'acquire', 4, 'exclusive', 'invoke', 200)
      .event('1/0', 'acquire', 4, 'exclusive', 'fail', 900, 'LockTimeoutError')
      .build();
    const impact = failureImpact(h, victim, 100);
    // Lock 5: nobody asked again, so nothing shows whether it was freed.
    expect(impact).toStrictEqual({ unknownOps: 0, affectedLocks: [4, 5], recoveredLocks: 0, unrecoveredLocks: [4] });
  });

  it('ignores grants before the failure and the survivors’ own holds', () => {
    const h = new HistoryBuilder().acquire('2/0', 1, 'shared', 10, 20).hold('1/0', 1, 'shared', 30, 40).hold('1/0', 1, 'shared', 130, 140).hold('1/1', 9, 'exclusive', 110, 120).build();
    expect(failureImpact(h, victim, 100)).toStrictEqual({ unknownOps: 0, affectedLocks: [1], recoveredLocks: 1, unrecoveredLocks: [], recoveryNs: 30 });
  });
});

describe('failureImpact with a history that ends before the failure', () => {
  it('does not count a lock a survivor got between the end of the victim’s history and the failure', () => {
    const h = new HistoryBuilder()
      .acquire('2/0', 1, 'exclusive', 10, 20) // last seen holding 1 and 2; history ends at 30
      .acquire('2/1', 2, 'exclusive', 25, 30)
      .acquire('1/0', 1, 'exclusive', 22, 60) // granted at 60 < failure at 100: 2/0 released it in the lost stretch
      .acquire('1/1', 2, 'exclusive', 40, 900)
      .build();
    expect(failureImpact(h, victim, 100, 30)).toStrictEqual({ unknownOps: 0, affectedLocks: [2], recoveredLocks: 1, unrecoveredLocks: [], recoveryNs: 800 });
    // Without the end of history, lock 1 would look recovered before the failure was even seen.
    expect(failureImpact(h, victim, 100).affectedLocks).toStrictEqual([1, 2]);
  });
});

describe('failureImpact from the survivors’ side', () => {
  it('counts a lock survivors were waiting for at the failure, even when the victim’s history does not show it held', () => {
    const h = new HistoryBuilder()
      .hold('2/0', 8, 'exclusive', 10, 20) // history ends at 21; it took lock 3 in the lost stretch
      .acquire('1/0', 3, 'exclusive', 90, 1_400) // waiting at the failure (100), granted after recovery
      .acquire('1/1', 4, 'exclusive', 150, 160) // asked after the failure: not affected
      .build();
    expect(failureImpact(h, victim, 100, 21)).toStrictEqual({ unknownOps: 0, affectedLocks: [3], recoveredLocks: 1, unrecoveredLocks: [], recoveryNs: 1_300 });
  });
});
