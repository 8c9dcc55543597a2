import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';
import { NS_PER_US } from '@lockfabric/ports';

const NS_PER_S = 1e9;

/**
 * Latencies in ns at 3 significant digits. The histogram starts tiny and grows with the largest
 * value seen, so an idle client costs little memory; clients of one process can share one RunStats.
 */
function newHistogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 2, numberOfSignificantValueDigits: 3, autoResize: true, bitBucketSize: 32 });
}

/** RunStats in a JSON-safe form for the wire: counts, and histograms in HdrHistogram's compressed base64 encoding. */
export interface RunStatsWire {
  readonly acquires: number;
  readonly releases: number;
  readonly acquireFailures: number;
  readonly releaseFailures: number;
  readonly failuresByCode: Readonly<Record<string, number>>;
  readonly acquireLatencyNs: string;
  readonly releaseLatencyNs: string;
}

/** What a run (or one client, or one process) did: latency histograms and counts. Mergeable. */
export class RunStats {
  readonly acquireLatencyNs: Histogram = newHistogram();
  readonly releaseLatencyNs: Histogram = newHistogram();
  /** Successful acquires. */
  acquires = 0;
  /** Successful releases. */
  releases = 0;
  acquireFailures = 0;
  releaseFailures = 0;
  /** Failures of either kind by error code (`LockFabricError.code`, else the error's name). */
  readonly failuresByCode = new Map<string, number>();

  recordAcquire(latencyNs: number): void {
    this.acquires++;
    this.acquireLatencyNs.recordValue(toRecordable(latencyNs));
  }

  recordRelease(latencyNs: number): void {
    this.releases++;
    this.releaseLatencyNs.recordValue(toRecordable(latencyNs));
  }

  recordFailure(op: 'acquire' | 'release', code: string): void {
    if (op === 'acquire') this.acquireFailures++;
    else this.releaseFailures++;
    this.failuresByCode.set(code, (this.failuresByCode.get(code) ?? 0) + 1);
  }

  /** Adds `other` into this one. */
  merge(other: RunStats): this {
    this.acquireLatencyNs.add(other.acquireLatencyNs);
    this.releaseLatencyNs.add(other.releaseLatencyNs);
    this.acquires += other.acquires;
    this.releases += other.releases;
    this.acquireFailures += other.acquireFailures;
    this.releaseFailures += other.releaseFailures;
    for (const [code, count] of other.failuresByCode) this.failuresByCode.set(code, (this.failuresByCode.get(code) ?? 0) + count);
    return this;
  }

  toWire(): RunStatsWire {
    return {
      acquires: this.acquires,
      releases: this.releases,
      acquireFailures: this.acquireFailures,
      releaseFailures: this.releaseFailures,
      failuresByCode: sortedRecord(this.failuresByCode),
      acquireLatencyNs: encodeIntoCompressedBase64(this.acquireLatencyNs),
      releaseLatencyNs: encodeIntoCompressedBase64(this.releaseLatencyNs),
    };
  }

  static fromWire(wire: RunStatsWire): RunStats {
    const stats = new RunStats();
    stats.acquireLatencyNs.add(decodeHistogram(wire.acquireLatencyNs));
    stats.releaseLatencyNs.add(decodeHistogram(wire.releaseLatencyNs));
    stats.acquires = wire.acquires;
    stats.releases = wire.releases;
    stats.acquireFailures = wire.acquireFailures;
    stats.releaseFailures = wire.releaseFailures;
    for (const [code, count] of Object.entries(wire.failuresByCode)) stats.failuresByCode.set(code, count);
    return stats;
  }

  /** One RunStats holding the sum of all. */
  static mergeAll(all: Iterable<RunStats>): RunStats {
    const total = new RunStats();
    for (const stats of all) total.merge(stats);
    return total;
  }
}

function sortedRecord(map: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function decodeHistogram(base64: string): Histogram {
  const histogram = decodeFromCompressedBase64(base64, 32);
  histogram.autoResize = true;
  return histogram;
}

function toRecordable(latencyNs: number): number {
  if (!Number.isFinite(latencyNs)) throw new RangeError(`latency ${latencyNs} ns is not finite`);
  // A real clock gives fractions of a ns; a sleeping clock can give 0. Neither is worth a bucket of its own.
  return Math.max(0, Math.round(latencyNs));
}

export interface LatencySummaryUs {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

export interface RunSummary {
  readonly elapsedNs: number;
  /** Successful acquire-release operations per second (an operation is one successful acquire). */
  readonly throughput: number;
  /** Acquire latency, invoke to grant, of successful acquires. */
  readonly latencyUs: LatencySummaryUs;
  /** Release latency, invoke to completion, of successful releases. */
  readonly releaseLatencyUs: LatencySummaryUs;
  /** Acquire latency CDF at fixed fractions (CDF_FRACTIONS), for plots; empty when nothing was acquired. */
  readonly latencyCdfUs?: readonly { readonly fraction: number; readonly us: number }[];
  readonly acquires: number;
  readonly releases: number;
  /** Failed acquires and releases together. */
  readonly failures: number;
  readonly acquireFailures: number;
  readonly releaseFailures: number;
  readonly failuresByCode: Readonly<Record<string, number>>;
  /** Verb counters as given, and each divided by the successful acquires: the papers' "verbs per lock op". */
  readonly verbs?: { readonly counts: Readonly<Record<string, number>>; readonly total: number; readonly perOp: Readonly<Record<string, number>> };
}

function latencySummary(histogram: Histogram): LatencySummaryUs {
  if (histogram.totalCount === 0) return { p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0 };
  const us = (ns: number) => ns / NS_PER_US;
  return {
    p50: us(histogram.getValueAtPercentile(50)),
    p90: us(histogram.getValueAtPercentile(90)),
    p99: us(histogram.getValueAtPercentile(99)),
    p999: us(histogram.getValueAtPercentile(99.9)),
    // From the buckets, like the percentiles, so a summary is the same before and after the wire.
    max: us(histogram.getValueAtPercentile(100)),
    mean: us(histogram.mean),
  };
}

/** Where the acquire-latency CDF is sampled: dense in the tail, where protocols differ most. */
export const CDF_FRACTIONS: readonly number[] = [0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1];

function latencyCdf(histogram: Histogram): { fraction: number; us: number }[] {
  if (histogram.totalCount === 0) return [];
  return CDF_FRACTIONS.map((fraction) => ({ fraction, us: histogram.getValueAtPercentile(fraction * 100) / NS_PER_US }));
}

/** Figures of a run that took `elapsedNs`; `verbCounters` (e.g. NIC counters by verb) are normalised per operation. */
export function summarize(stats: RunStats, elapsedNs: number, verbCounters?: Readonly<Record<string, number>>): RunSummary {
  if (!(elapsedNs >= 0) || !Number.isFinite(elapsedNs)) throw new RangeError(`elapsedNs must be a finite number ≥ 0, got ${elapsedNs}`);
  const summary: RunSummary = {
    elapsedNs,
    throughput: elapsedNs > 0 ? (stats.acquires * NS_PER_S) / elapsedNs : 0,
    latencyUs: latencySummary(stats.acquireLatencyNs),
    releaseLatencyUs: latencySummary(stats.releaseLatencyNs),
    latencyCdfUs: latencyCdf(stats.acquireLatencyNs),
    acquires: stats.acquires,
    releases: stats.releases,
    failures: stats.acquireFailures + stats.releaseFailures,
    acquireFailures: stats.acquireFailures,
    releaseFailures: stats.releaseFailures,
    failuresByCode: sortedRecord(stats.failuresByCode),
  };
  if (!verbCounters) return summary;
  const counts = { ...verbCounters };
  const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
  const perOp = Object.fromEntries(Object.entries(counts).map(([verb, n]) => [verb, stats.acquires > 0 ? n / stats.acquires : 0]));
  return { ...summary, verbs: { counts, total, perOp } };
}
