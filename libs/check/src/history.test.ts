import { describe, expect, it } from 'vitest';
import { HistoryRecorder, inTimeOrder, mergeHistories, packFlags } from './history.js';
import type { HistoryEvent } from './history.js';

describe('HistoryRecorder', () => {
  it('records invoke, ok and fail events and gives them back as objects', () => {
    const recorder = new HistoryRecorder();
    recorder.invoke('1/2', 'acquire', 7, 'exclusive', 10);
    recorder.ok('1/2', 'acquire', 7, 'exclusive', 15.5);
    recorder.invoke('1/3', 'acquire', 7, 'shared', 16);
    recorder.fail('1/3', 'acquire', 7, 'shared', 30, 'LockTimeoutError');
    recorder.append({ client: '1/2', lock: 7, mode: 'exclusive', op: 'release', phase: 'invoke', timeNs: 40 });
    expect(recorder.size).toBe(5);
    expect(recorder.events()).toEqual([
      { client: '1/2', lock: 7, mode: 'exclusive', op: 'acquire', phase: 'invoke', timeNs: 10 },
      { client: '1/2', lock: 7, mode: 'exclusive', op: 'acquire', phase: 'ok', timeNs: 15.5 },
      { client: '1/3', lock: 7, mode: 'shared', op: 'acquire', phase: 'invoke', timeNs: 16 },
      { client: '1/3', lock: 7, mode: 'shared', op: 'acquire', phase: 'fail', timeNs: 30, error: 'LockTimeoutError' },
      { client: '1/2', lock: 7, mode: 'exclusive', op: 'release', phase: 'invoke', timeNs: 40 },
    ]);
    expect(Object.keys(recorder.event(0))).not.toContain('error');
    expect([...recorder]).toEqual(recorder.events());
  });

  it('grows past its initial capacity without losing events', () => {
    const recorder = new HistoryRecorder();
    for (let i = 0; i < 5000; i++) recorder.invoke(`0/${i % 13}`, i % 2 ? 'release' : 'acquire', i, i % 3 ? 'shared' : 'exclusive', i * 2);
    expect(recorder.size).toBe(5000);
    expect(recorder.event(4999)).toEqual({ client: '0/7', lock: 4999, mode: 'shared', op: 'release', phase: 'invoke', timeNs: 9998 });
    expect(recorder.event(1234)).toEqual({ client: '0/12', lock: 1234, mode: 'shared', op: 'acquire', phase: 'invoke', timeNs: 2468 });
  });

  it('rejects lock ids and times it cannot store', () => {
    const recorder = new HistoryRecorder();
    expect(() => recorder.invoke('0/0', 'acquire', -1, 'shared', 0)).toThrow(RangeError);
    expect(() => recorder.invoke('0/0', 'acquire', 1.5, 'shared', 0)).toThrow(RangeError);
    expect(() => recorder.invoke('0/0', 'acquire', 1, 'shared', Number.NaN)).toThrow(RangeError);
    expect(() => recorder.event(0)).toThrow(RangeError);
  });

  it('record() with a clientId() index stores what invoke/ok/fail store, and refuses an index it never gave', () => {
    const byName = new HistoryRecorder();
    const byId = new HistoryRecorder();
    byName.invoke('2/1', 'acquire', 7, 'shared', 10);
    byName.fail('2/1', 'acquire', 7, 'shared', 20, 'LockTimeoutError');
    byName.ok('1/0', 'release', 4, 'exclusive', 30);
    const a = byId.clientId('2/1');
    expect(byId.clientId('2/1')).toBe(a);
    byId.record(a, 7, packFlags('shared', 'acquire', 'invoke'), 10);
    byId.record(a, 7, packFlags('shared', 'acquire', 'fail'), 20, 'LockTimeoutError');
    byId.record(byId.clientId('1/0'), 4, packFlags('exclusive', 'release', 'ok'), 30);
    expect(byId.events()).toEqual(byName.events());
    expect(() => byId.record(5, 1, 0, 40)).toThrow(RangeError);
    expect(() => byId.record(a, -1, 0, 40)).toThrow(RangeError);
    expect(byId.size).toBe(3);
  });

  it('starts over after clear, forgetting clients too', () => {
    const recorder = new HistoryRecorder();
    recorder.fail('0/1', 'acquire', 1, 'shared', 5, 'X');
    recorder.clear();
    recorder.invoke('0/2', 'acquire', 2, 'exclusive', 6);
    expect(recorder.events()).toEqual([{ client: '0/2', lock: 2, mode: 'exclusive', op: 'acquire', phase: 'invoke', timeNs: 6 }]);
    expect(recorder.columns().clientNames).toEqual(['0/2']);
  });
});

describe('mergeHistories', () => {
  const e = (client: string, timeNs: number): HistoryEvent => ({ client, lock: 0, mode: 'shared', op: 'acquire', phase: 'invoke', timeNs });

  it('orders by time and keeps equal times in history order, then recorded order', () => {
    const a = [e('a', 1), e('a', 5), e('a2', 5)];
    const b = new HistoryRecorder();
    b.invoke('b', 'acquire', 0, 'shared', 0);
    b.invoke('b', 'acquire', 0, 'shared', 5);
    const merged = mergeHistories([a, b]);
    expect(merged.map((x) => `${x.client}@${x.timeNs}`)).toEqual(['b@0', 'a@1', 'a@5', 'a2@5', 'b@5']);
  });

  it('inTimeOrder leaves an ordered history as is and sorts a disordered one stably', () => {
    const ordered = [e('a', 1), e('b', 1), e('c', 2)];
    expect(inTimeOrder(ordered)).toBe(ordered);
    const disordered = [e('c', 2), e('a', 1), e('b', 1)];
    expect(inTimeOrder(disordered).map((x) => x.client)).toEqual(['a', 'b', 'c']);
    expect(disordered.map((x) => x.client)).toEqual(['c', 'a', 'b']);
  });
});
