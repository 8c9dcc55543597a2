import type { HistoryEvent } from '@lockfabric/check';
import type { TimelineBucket } from './model.js';

export interface TimelineOptions {
  readonly bucketMs: number;
  /** Start of the first bucket; default: the earliest event. */
  readonly startNs?: number;
  /** End of the covered time (inclusive); default: the latest event. */
  readonly endNs?: number;
}

/** A bucket as `timelineFromHistory` fills it: `endNs` and `inFlight` are always set. */
export interface HistoryTimelineBucket extends TimelineBucket {
  readonly endNs: number;
  readonly inFlight: number;
}

export interface Timeline {
  readonly startNs: number;
  readonly endNs: number;
  readonly bucketMs: number;
  readonly buckets: readonly HistoryTimelineBucket[];
}

/** Guards against a bucket size that would allocate millions of buckets by mistake. */
export const MAX_TIMELINE_BUCKETS = 1_000_000;

/** Error code counted for a failed acquire whose event names none. */
export const UNNAMED_ERROR = 'unnamed';

interface Accumulator {
  ok: number;
  failed: number;
  readonly failedByCode: Record<string, number>;
  readonly latenciesNs: number[];
  inFlight: number;
}

/**
 * Cuts a history into buckets of `bucketMs` and summarises the acquires in each.
 *
 * Buckets cover [startNs, endNs]; an event at exactly `endNs` counts in the last bucket. An acquire
 * counts in the bucket of its ok or fail event. Its latency pairs that ok with the latest acquire
 * invoke of the same client and lock, which may lie before `startNs`; an ok with no invoke counts
 * but has no latency. Releases are ignored. Events are sorted by time (stably), so the whole pass
 * is O(n log n).
 */
export function timelineFromHistory(history: Iterable<HistoryEvent>, options: TimelineOptions): Timeline {
  const { bucketMs } = options;
  if (!(Number.isFinite(bucketMs) && bucketMs > 0)) throw new RangeError(`bucketMs must be a positive number, got ${bucketMs}`);
  const events = Array.from(history).sort((a, b) => a.timeNs - b.timeNs);
  const first = events[0]?.timeNs;
  const last = events[events.length - 1]?.timeNs;
  const startNs = options.startNs ?? first ?? options.endNs ?? 0;
  const endNs = options.endNs ?? Math.max(last ?? startNs, startNs);
  if (!Number.isFinite(startNs) || !Number.isFinite(endNs)) throw new RangeError(`startNs and endNs must be finite, got ${startNs} and ${endNs}`);
  if (endNs < startNs) throw new RangeError(`endNs ${endNs} is before startNs ${startNs}`);
  if (events.length === 0 && options.startNs === undefined && options.endNs === undefined) {
    return { startNs, endNs, bucketMs, buckets: [] };
  }

  const bucketNs = bucketMs * 1e6;
  const count = Math.max(1, Math.ceil((endNs - startNs) / bucketNs));
  if (count > MAX_TIMELINE_BUCKETS) throw new RangeError(`${count} buckets of ${bucketMs} ms exceed ${MAX_TIMELINE_BUCKETS}`);
  const acc: Accumulator[] = Array.from({ length: count }, () => ({ ok: 0, failed: 0, failedByCode: {}, latenciesNs: [], inFlight: 0 }));

  // Acquires invoked and not completed, by client and lock: the invoke time.
  const pending = new Map<string, number>();
  let next = 0; // first bucket whose in-flight count is not yet taken
  const closeBucketsBefore = (timeNs: number): void => {
    // A bucket is closed once an event at or after its end arrives (the last one never is).
    while (next < count - 1 && timeNs >= startNs + (next + 1) * bucketNs) (acc[next++] as Accumulator).inFlight = pending.size;
  };

  for (const event of events) {
    if (event.timeNs > endNs) break;
    if (event.op !== 'acquire') continue;
    closeBucketsBefore(event.timeNs);
    const key = `${event.client}\u0000${event.lock}`;
    if (event.phase === 'invoke') {
      pending.set(key, event.timeNs);
      continue;
    }
    const invokedNs = pending.get(key);
    pending.delete(key);
    if (event.timeNs < startNs) continue;
    const bucket = acc[Math.min(count - 1, Math.floor((event.timeNs - startNs) / bucketNs))] as Accumulator;
    if (event.phase === 'ok') {
      bucket.ok++;
      if (invokedNs !== undefined) bucket.latenciesNs.push(event.timeNs - invokedNs);
    } else {
      const code = event.error ?? UNNAMED_ERROR;
      bucket.failed++;
      bucket.failedByCode[code] = (bucket.failedByCode[code] ?? 0) + 1;
    }
  }
  while (next < count) (acc[next++] as Accumulator).inFlight = pending.size;

  const buckets = acc.map((a, i): HistoryTimelineBucket => {
    const bucketStartNs = startNs + i * bucketNs;
    const bucketEndNs = Math.min(endNs, bucketStartNs + bucketNs);
    // A zero-length bucket (startNs = endNs) is rated over the nominal bucket length.
    const coveredNs = bucketEndNs > bucketStartNs ? bucketEndNs - bucketStartNs : bucketNs;
    const base = {
      startNs: bucketStartNs,
      endNs: bucketEndNs,
      ok: a.ok,
      failed: a.failed,
      failedByCode: a.failedByCode,
      throughput: (a.ok * 1e9) / coveredNs,
      inFlight: a.inFlight,
    };
    if (a.latenciesNs.length === 0) return base;
    const sorted = a.latenciesNs.sort((x, y) => x - y);
    return { ...base, p50Us: percentile(sorted, 50) / 1e3, p99Us: percentile(sorted, 99) / 1e3, maxUs: (sorted[sorted.length - 1] as number) / 1e3 };
  });
  return { startNs, endNs, bucketMs, buckets };
}

/** Nearest-rank percentile of ascending, non-empty samples: the smallest value with at least p % at or below it. */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) throw new RangeError('percentile of no samples');
  const rank = Math.max(1, Math.ceil((p / 100) * sortedAscending.length));
  return sortedAscending[Math.min(rank, sortedAscending.length) - 1] as number;
}
