import { HistoryRecorder } from '@lockfabric/check';
import type { HistoryEvent } from '@lockfabric/check';
import { describe, expect, it } from 'vitest';
import { MAX_TIMELINE_BUCKETS, percentile, timelineFromHistory } from './timeline.js';

const US = 1e3;
const MS = 1e6;

type Step = [client: string, lock: number, op: 'acquire' | 'release', phase: 'invoke' | 'ok' | 'fail', timeNs: number, error?: string];
const history = (steps: readonly Step[]): HistoryEvent[] =>
  steps.map(([client, lock, op, phase, timeNs, error]) => ({ client, lock, mode: 'exclusive', op, phase, timeNs, ...(error === undefined ? {} : { error }) }));

/**
 * Three 1 ms buckets over [0, 3 ms]. Client 0/1 holds two locks at once (pairing is by client and
 * lock), releases are interleaved (never counted), one ok lands exactly on a bucket boundary, one
 * exactly on endNs, and one after endNs (not counted; its acquire stays in flight).
 */
const THREE_BUCKETS: Step[] = [
  ['0/1', 1, 'acquire', 'invoke', 100 * US],
  ['0/1', 2, 'acquire', 'invoke', 150 * US], // while its acquire of lock 1 is pending
  ['0/2', 1, 'acquire', 'invoke', 200 * US],
  ['0/3', 2, 'acquire', 'invoke', 250 * US],
  ['0/1', 1, 'acquire', 'ok', 300 * US], // 200 µs, bucket 0
  ['0/1', 1, 'release', 'invoke', 500 * US],
  ['0/1', 1, 'release', 'ok', 600 * US],
  ['0/1', 2, 'acquire', 'ok', 1_000 * US], // 850 µs, bucket 1 (on the boundary)
  ['0/3', 2, 'acquire', 'fail', 1_200 * US, 'LockTimeoutError'],
  ['0/2', 1, 'acquire', 'ok', 1_500 * US], // 1300 µs, bucket 1
  ['1/4', 3, 'acquire', 'invoke', 1_600 * US],
  ['1/4', 3, 'acquire', 'fail', 1_700 * US, 'NodeUnreachableError'],
  ['1/5', 3, 'acquire', 'invoke', 1_750 * US],
  ['1/5', 3, 'acquire', 'fail', 1_800 * US, 'LockTimeoutError'],
  ['1/6', 4, 'acquire', 'invoke', 1_900 * US],
  ['1/6', 4, 'acquire', 'ok', 2_100 * US], // 200 µs, bucket 2
  ['0/1', 2, 'release', 'fail', 2_200 * US, 'ReleaseError'], // releases never count, not even failed ones
  ['1/7', 5, 'acquire', 'invoke', 2_500 * US], // never completes
  ['1/8', 5, 'acquire', 'invoke', 2_900 * US],
  ['1/8', 5, 'acquire', 'fail', 2_950 * US], // no error named
  ['1/9', 6, 'acquire', 'invoke', 2_950 * US],
  ['1/9', 6, 'acquire', 'ok', 3_000 * US], // 50 µs, on endNs: last bucket
  ['1/10', 7, 'acquire', 'invoke', 2_990 * US],
  ['1/10', 7, 'acquire', 'ok', 3_500 * US], // after endNs: ignored, so 1/10 is in flight at the end
];

const EXPECTED_THREE_BUCKETS = [
  { startNs: 0, endNs: 1 * MS, ok: 1, failed: 0, failedByCode: {}, throughput: 1_000, p50Us: 200, p99Us: 200, maxUs: 200, inFlight: 3 },
  {
    startNs: 1 * MS,
    endNs: 2 * MS,
    ok: 2,
    failed: 3,
    failedByCode: { LockTimeoutError: 2, NodeUnreachableError: 1 },
    throughput: 2_000,
    p50Us: 850,
    p99Us: 1_300,
    maxUs: 1_300,
    inFlight: 1,
  },
  { startNs: 2 * MS, endNs: 3 * MS, ok: 2, failed: 1, failedByCode: { unnamed: 1 }, throughput: 2_000, p50Us: 50, p99Us: 200, maxUs: 200, inFlight: 2 },
];

describe('timelineFromHistory', () => {
  it('counts ok and failed acquires per bucket, by error code, with latency and in-flight acquires', () => {
    const timeline = timelineFromHistory(history(THREE_BUCKETS), { bucketMs: 1, startNs: 0, endNs: 3 * MS });
    expect(timeline).toEqual({ startNs: 0, endNs: 3 * MS, bucketMs: 1, buckets: EXPECTED_THREE_BUCKETS });
  });

  it('gives the same buckets for shuffled input and for a HistoryRecorder', () => {
    const shuffled = history(THREE_BUCKETS).reverse();
    expect(timelineFromHistory(shuffled, { bucketMs: 1, startNs: 0, endNs: 3 * MS }).buckets).toEqual(EXPECTED_THREE_BUCKETS);
    const recorder = new HistoryRecorder();
    for (const event of history(THREE_BUCKETS)) recorder.append(event);
    expect(timelineFromHistory(recorder, { bucketMs: 1, startNs: 0, endNs: 3 * MS }).buckets).toEqual(EXPECTED_THREE_BUCKETS);
  });

  it('keeps the recorded order of events at the same time (an ok right at its invoke has 0 µs)', () => {
    const t = timelineFromHistory(history([['0/1', 1, 'acquire', 'invoke', 5 * US], ['0/1', 1, 'acquire', 'ok', 5 * US]]), { bucketMs: 1, startNs: 0 });
    expect(t.buckets).toEqual([{ startNs: 0, endNs: 5 * US, ok: 1, failed: 0, failedByCode: {}, throughput: 200_000, p50Us: 0, p99Us: 0, maxUs: 0, inFlight: 0 }]);
  });

  it('defaults the range to the first and last event, and rates a short last bucket over the time it covers', () => {
    const steps: Step[] = [
      ['0/1', 1, 'acquire', 'invoke', 10 * MS],
      ['0/1', 1, 'acquire', 'ok', 10.5 * MS],
      ['0/2', 1, 'acquire', 'invoke', 11 * MS],
      ['0/2', 1, 'acquire', 'ok', 12.5 * MS],
    ];
    const t = timelineFromHistory(history(steps), { bucketMs: 2 });
    expect(t.startNs).toBe(10 * MS);
    expect(t.endNs).toBe(12.5 * MS);
    expect(t.buckets).toEqual([
      { startNs: 10 * MS, endNs: 12 * MS, ok: 1, failed: 0, failedByCode: {}, throughput: 500, p50Us: 500, p99Us: 500, maxUs: 500, inFlight: 1 },
      // 0.5 ms covered, 1 ok: 2000/s, not 500/s
      { startNs: 12 * MS, endNs: 12.5 * MS, ok: 1, failed: 0, failedByCode: {}, throughput: 2_000, p50Us: 1_500, p99Us: 1_500, maxUs: 1_500, inFlight: 0 },
    ]);
  });

  it('pairs an ok with an invoke before startNs, but counts nothing that completes before it', () => {
    const steps: Step[] = [
      ['0/1', 1, 'acquire', 'invoke', 1 * MS],
      ['0/2', 1, 'acquire', 'invoke', 2 * MS],
      ['0/2', 1, 'acquire', 'fail', 3 * MS, 'LockTimeoutError'],
      ['0/1', 1, 'acquire', 'ok', 4.5 * MS],
      ['0/3', 2, 'acquire', 'invoke', 4.6 * MS],
    ];
    const t = timelineFromHistory(history(steps), { bucketMs: 1, startNs: 4 * MS, endNs: 5 * MS });
    expect(t.buckets).toEqual([{ startNs: 4 * MS, endNs: 5 * MS, ok: 1, failed: 0, failedByCode: {}, throughput: 1_000, p50Us: 3_500, p99Us: 3_500, maxUs: 3_500, inFlight: 1 }]);
  });

  it('counts an ok without an invoke, without a latency', () => {
    const t = timelineFromHistory(history([['0/1', 1, 'acquire', 'ok', 0.5 * MS]]), { bucketMs: 1, startNs: 0, endNs: 1 * MS });
    expect(t.buckets).toEqual([{ startNs: 0, endNs: 1 * MS, ok: 1, failed: 0, failedByCode: {}, throughput: 1_000, inFlight: 0 }]);
  });

  it('takes nearest-rank percentiles of each bucket, not of the whole run', () => {
    const steps: Step[] = [];
    // Bucket 0: latencies 1..100 µs, recorded in a scrambled order. Bucket 1: 10, 20, 30, 40 µs.
    for (let i = 0; i < 100; i++) {
      const us = ((i * 37) % 100) + 1;
      steps.push([`0/${i}`, 1, 'acquire', 'invoke', 100 * US], [`0/${i}`, 1, 'acquire', 'ok', 100 * US + us * US]);
    }
    for (const us of [40, 10, 30, 20]) steps.push([`1/${us}`, 2, 'acquire', 'invoke', 1_100 * US], [`1/${us}`, 2, 'acquire', 'ok', 1_100 * US + us * US]);
    const [b0, b1] = timelineFromHistory(history(steps), { bucketMs: 1, startNs: 0, endNs: 2 * MS }).buckets;
    expect([b0?.ok, b0?.p50Us, b0?.p99Us, b0?.maxUs]).toEqual([100, 50, 99, 100]);
    expect([b1?.ok, b1?.p50Us, b1?.p99Us, b1?.maxUs]).toEqual([4, 20, 40, 40]);
  });

  it('returns no buckets for an empty history without bounds, and empty buckets with bounds', () => {
    expect(timelineFromHistory([], { bucketMs: 1 })).toEqual({ startNs: 0, endNs: 0, bucketMs: 1, buckets: [] });
    expect(timelineFromHistory([], { bucketMs: 1, startNs: 0, endNs: 1.5 * MS }).buckets).toEqual([
      { startNs: 0, endNs: 1 * MS, ok: 0, failed: 0, failedByCode: {}, throughput: 0, inFlight: 0 },
      { startNs: 1 * MS, endNs: 1.5 * MS, ok: 0, failed: 0, failedByCode: {}, throughput: 0, inFlight: 0 },
    ]);
  });

  it('rejects bad options', () => {
    const h = history(THREE_BUCKETS);
    expect(() => timelineFromHistory(h, { bucketMs: 0 })).toThrow(RangeError);
    expect(() => timelineFromHistory(h, { bucketMs: -1 })).toThrow(RangeError);
    expect(() => timelineFromHistory(h, { bucketMs: Number.NaN })).toThrow(RangeError);
    expect(() => timelineFromHistory(h, { bucketMs: 1, startNs: 2 * MS, endNs: 1 * MS })).toThrow(/before startNs/);
    expect(() => timelineFromHistory(h, { bucketMs: 1, startNs: Number.NEGATIVE_INFINITY })).toThrow(RangeError);
    expect(() => timelineFromHistory(h, { bucketMs: 1e-6, startNs: 0, endNs: (MAX_TIMELINE_BUCKETS + 1) * 1 })).toThrow(/exceed/);
    expect(timelineFromHistory(h, { bucketMs: 1e-6, startNs: 0, endNs: MAX_TIMELINE_BUCKETS }).buckets).toHaveLength(MAX_TIMELINE_BUCKETS);
  });
});

describe('percentile', () => {
  it('is nearest-rank', () => {
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
    expect(percentile([10, 20, 30], 99)).toBe(30);
    expect(percentile([10, 20, 30], 0)).toBe(10);
    expect(percentile([10, 20, 30], 100)).toBe(30);
    expect(() => percentile([], 50)).toThrow(RangeError);
  });
});
