import { describe, expect, it } from 'vitest';
import { HistoryBuilder } from '../tests/support/history-builder.js';
import { grantTimes, quantileOf } from './grant-time.js';
import type { GrantTimeOptions } from './grant-time.js';
import { HistoryRecorder } from './history.js';
import type { HistoryEvent } from './history.js';

/** [acquire, wait, grant] per granted acquire, in grant order. */
function rows(events: HistoryEvent[], options?: GrantTimeOptions): number[][] {
  const t = grantTimes(events, options);
  return Array.from({ length: t.count }, (_, i) => [t.acquireNs[i]!, t.waitNs[i]!, t.grantNs[i]!]);
}

describe('grantTimes', () => {
  it('without a conflicting holder, the whole acquire latency is grant time', () => {
    const h = new HistoryBuilder().acquire('0/1', 7, 'exclusive', 100, 130).release('0/1', 7, 'exclusive', 200, 210);
    expect(rows(h.build())).toEqual([[30, 0, 30]]);
  });

  it('a holder that let go before the request was issued causes no wait', () => {
    const h = new HistoryBuilder().hold('0/1', 7, 'exclusive', 10, 50).acquire('0/2', 7, 'exclusive', 60, 75);
    expect(rows(h.build())[1]).toEqual([15, 0, 15]);
  });

  it('an exclusive request waits for a shared holder; the time after its release is grant time', () => {
    const h = new HistoryBuilder()
      .acquire('0/1', 7, 'shared', 0, 10)
      .event('0/2', 'acquire', 7, 'exclusive', 'invoke', 20)
      .release('0/1', 7, 'shared', 100, 105)
      .event('0/2', 'acquire', 7, 'exclusive', 'ok', 112);
    expect(rows(h.build())).toEqual([
      [10, 0, 10],
      [92, 80, 12],
    ]);
  });

  it('a shared request does not wait for a shared holder, only for an exclusive one', () => {
    const sharedBehindShared = new HistoryBuilder()
      .acquire('0/1', 7, 'shared', 0, 10)
      .event('0/2', 'acquire', 7, 'shared', 'invoke', 20)
      .release('0/1', 7, 'shared', 100, 105)
      .event('0/2', 'acquire', 7, 'shared', 'ok', 112);
    expect(rows(sharedBehindShared.build())[1]).toEqual([92, 0, 92]);
    const sharedBehindExclusive = new HistoryBuilder()
      .acquire('0/1', 7, 'exclusive', 0, 10)
      .event('0/2', 'acquire', 7, 'shared', 'invoke', 20)
      .release('0/1', 7, 'exclusive', 100, 105)
      .event('0/2', 'acquire', 7, 'shared', 'ok', 112);
    expect(rows(sharedBehindExclusive.build())[1]).toEqual([92, 80, 12]);
  });

  it('waiting behind two holders in turn ends at the second release', () => {
    const h = new HistoryBuilder()
      .acquire('0/1', 7, 'exclusive', 0, 10)
      .event('0/2', 'acquire', 7, 'exclusive', 'invoke', 20)
      .event('0/3', 'acquire', 7, 'exclusive', 'invoke', 30)
      .release('0/1', 7, 'exclusive', 100, 101)
      .event('0/2', 'acquire', 7, 'exclusive', 'ok', 110)
      .release('0/2', 7, 'exclusive', 200, 201)
      .event('0/3', 'acquire', 7, 'exclusive', 'ok', 215);
    expect(rows(h.build())).toEqual([
      [10, 0, 10],
      [90, 80, 10],
      [185, 170, 15],
    ]);
  });

  it('ignores other locks, the requester\'s own holds, failed and unfinished acquires', () => {
    const h = new HistoryBuilder()
      .hold('0/9', 8, 'exclusive', 5, 90) // another lock
      .acquire('0/1', 7, 'exclusive', 0, 10)
      .release('0/1', 7, 'exclusive', 40, 41)
      .event('0/1', 'acquire', 7, 'exclusive', 'invoke', 50) // own earlier hold ended before
      .event('0/1', 'acquire', 7, 'exclusive', 'ok', 60)
      .acquireFails('0/2', 7, 'exclusive', 55, 500)
      .event('0/3', 'acquire', 7, 'shared', 'invoke', 70);
    const t = grantTimes(h.build());
    expect(t.count).toBe(3); // 0/9's hold and 0/1's two
    expect(rows(h.build()).slice(1)).toEqual([
      [10, 0, 10],
      [10, 0, 10],
    ]);
  });

  it('reads a recorder the same as plain events', () => {
    const events = new HistoryBuilder()
      .acquire('0/1', 3, 'exclusive', 0, 10)
      .event('0/2', 'acquire', 3, 'shared', 'invoke', 20)
      .release('0/1', 3, 'exclusive', 60, 61)
      .event('0/2', 'acquire', 3, 'shared', 'ok', 70)
      .build();
    const recorder = new HistoryRecorder();
    for (const e of events) recorder.append(e);
    const fromRecorder = grantTimes(recorder);
    expect(Array.from(fromRecorder.grantNs)).toEqual(Array.from(grantTimes(events).grantNs));
    expect(Array.from(fromRecorder.waitNs)).toEqual([0, 40]);
  });

  it('mutant: counting shared-shared as a conflict is caught', () => {
    const h = new HistoryBuilder()
      .acquire('0/1', 7, 'shared', 0, 10)
      .event('0/2', 'acquire', 7, 'shared', 'invoke', 20)
      .release('0/1', 7, 'shared', 100, 105)
      .event('0/2', 'acquire', 7, 'shared', 'ok', 112);
    expect(rows(h.build())[1]).toEqual([92, 0, 92]);
    expect(rows(h.build(), { mutantSharedConflicts: true })[1]).not.toEqual([92, 0, 92]);
  });
});

describe('quantileOf', () => {
  it('takes the nearest rank and leaves the input alone', () => {
    const values = Float64Array.from([5, 1, 4, 2, 3]);
    expect(quantileOf(values, 0.5)).toBe(3);
    expect(quantileOf(values, 0.9)).toBe(5);
    expect(quantileOf(values, 0)).toBe(1);
    expect(Array.from(values)).toEqual([5, 1, 4, 2, 3]);
    expect(quantileOf(new Float64Array(0), 0.5)).toBeNaN();
    expect(() => quantileOf(values, 1.5)).toThrow(RangeError);
  });
});
