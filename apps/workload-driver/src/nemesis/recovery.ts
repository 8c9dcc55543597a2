/** A bucket of a run's timeline: its start and the acquires granted per second in it. */
export interface ThroughputBucket {
  readonly startNs: number;
  readonly throughput: number;
}

/** The baseline before the first fault: the median throughput of the buckets wholly before it (0 without any). */
export function baselineThroughput(buckets: readonly ThroughputBucket[], bucketNs: number, firstFaultNs: number): number {
  const before = buckets.filter((b) => b.startNs + bucketNs <= firstFaultNs && b.throughput > 0).map((b) => b.throughput).sort((a, b) => a - b);
  if (before.length === 0) return 0;
  const mid = before.length >> 1;
  return before.length % 2 ? before[mid]! : (before[mid - 1]! + before[mid]!) / 2;
}

/**
 * How long the run's throughput stayed below half its baseline after a fault began: from the fault's
 * start to the end of the last low bucket of the first low stretch starting within the fault window.
 * 0 when no bucket of the window dipped (the fault did not show in throughput); undefined when the
 * throughput never came back before the run ended.
 */
export function throughputRecoveryNs(buckets: readonly ThroughputBucket[], bucketNs: number, baseline: number, faultStartNs: number, faultEndNs: number): number | undefined {
  if (baseline <= 0) return undefined;
  const low = (b: ThroughputBucket) => b.throughput < baseline / 2;
  const from = buckets.findIndex((b) => b.startNs + bucketNs > faultStartNs);
  if (from < 0) return undefined;
  let first = -1;
  for (let i = from; i < buckets.length && buckets[i]!.startNs <= faultEndNs; i++) {
    if (low(buckets[i]!)) {
      first = i;
      break;
    }
  }
  if (first < 0) return 0;
  for (let i = first; i < buckets.length; i++) {
    if (!low(buckets[i]!)) return Math.max(0, buckets[i]!.startNs - faultStartNs);
  }
  return undefined;
}
