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

/** What `faultRecoveryNs` reads of one history event. */
export interface RecoveryEvent {
  readonly client: string;
  readonly op: string;
  readonly phase: string;
  readonly timeNs: number;
}

export interface FaultRecoveryInput {
  readonly history: readonly RecoveryEvent[];
  readonly bucketNs: number;
  /** Start of the run's timeline (bucket 0) and of the first fault (the baseline ends there). */
  readonly runStartNs: number;
  readonly firstFaultNs: number;
  readonly fault: { readonly startNs: number; readonly endNs: number };
  /**
   * For a compute-node kill: when the last lock it affected was granted to a survivor again
   * (absolute ns; the kill time when it affected none), or `'never'` when a survivor asked for one
   * and never got it.
   */
  readonly locksBackAtNs?: number | 'never';
  /** For a compute-node kill: the victim's client-name prefix (`"3/"`); its clients are not survivors. */
  readonly victimPrefix?: string;
}

/**
 * Recovery time of one fault (docs/fault-testing.md): from the fault's start until both
 * - the survivors — clients that record anything after the fault began, the victim's excluded —
 *   are back to half their own pre-fault throughput (the median of their grants per bucket before
 *   the first fault), which fewer survivors can reach where the whole run's baseline cannot; and
 * - for a kill, every lock the victim held or waited for (and every lock a survivor waited for at
 *   the kill) has been granted to a survivor again.
 * 0 when neither showed (no dip, nothing affected); undefined when either never happened in the run.
 */
export function faultRecoveryNs(input: FaultRecoveryInput): number | undefined {
  const { history, bucketNs, runStartNs, firstFaultNs, fault, locksBackAtNs, victimPrefix } = input;
  if (locksBackAtNs === 'never') return undefined;
  const victim = (client: string) => victimPrefix !== undefined && client.startsWith(victimPrefix);
  const survivors = new Set(history.filter((e) => e.timeNs > fault.startNs && !victim(e.client)).map((e) => e.client));
  const lastNs = history.reduce((m, e) => Math.max(m, e.timeNs), fault.endNs);
  const count = Math.max(1, Math.ceil((lastNs - runStartNs + 1) / bucketNs));
  const grants = new Array<number>(count).fill(0);
  for (const e of history) {
    if (e.op !== 'acquire' || e.phase !== 'ok' || !survivors.has(e.client) || e.timeNs < runStartNs) continue;
    grants[Math.min(count - 1, Math.floor((e.timeNs - runStartNs) / bucketNs))]!++;
  }
  const buckets = grants.map((n, i) => ({ startNs: runStartNs + i * bucketNs, throughput: n / (bucketNs / 1e9) }));
  const throughputNs = throughputRecoveryNs(buckets, bucketNs, baselineThroughput(buckets, bucketNs, firstFaultNs), fault.startNs, fault.endNs);
  if (throughputNs === undefined) return undefined;
  const locksNs = locksBackAtNs === undefined ? 0 : Math.max(0, locksBackAtNs - fault.startNs);
  return Math.max(throughputNs, locksNs);
}
