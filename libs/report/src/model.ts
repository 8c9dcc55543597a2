/**
 * The report of one fault-injection run. `report.json` holds exactly this object and is the source
 * of truth; the HTML page and the SVG plots are views of it.
 */

/** One injected fault, from its start until it was healed (`endNs`); open when `endNs` is absent. */
export interface FaultWindow {
  readonly id: string;
  readonly kind: string;
  readonly target: string;
  readonly startNs: number;
  readonly endNs?: number;
  /** How long after the fault ended the run took to recover, when the caller measured it. */
  readonly recoveryMs?: number;
  readonly note?: string;
}

export interface TimelineBucket {
  readonly startNs: number;
  /** Acquires that completed (phase ok) in the bucket. */
  readonly ok: number;
  /** Acquires that failed in the bucket; `failedByCode` splits them by error code. */
  readonly failed: number;
  readonly failedByCode: Readonly<Record<string, number>>;
  /** Completed acquires per second of the bucket's covered time. */
  readonly throughput: number;
  /** Acquire latency (invoke to ok of the same client and lock) of the acquires completed in the bucket. */
  readonly p50Us?: number;
  readonly p99Us?: number;
  readonly maxUs?: number;
  /** End of the time the bucket covers (the last bucket may be shorter than `bucketMs`). */
  readonly endNs?: number;
  /** Acquires invoked and not yet completed at the bucket's end. */
  readonly inFlight?: number;
}

export interface FaultVerdict {
  readonly safety: 'ok' | 'violation';
  readonly liveness: 'ok' | 'violation' | 'unchecked';
  readonly exitCode: number;
  readonly lines: readonly string[];
}

export interface FaultReport {
  /** Set in report.json so `lockfabric report` can tell the kind; optional in older files. */
  readonly kind?: 'nemesis';
  readonly version?: 1;
  readonly title: string;
  readonly protocol: string;
  readonly substrate: string;
  readonly seed: number;
  readonly startNs: number;
  readonly endNs: number;
  readonly bucketMs: number;
  readonly buckets: readonly TimelineBucket[];
  readonly faults: readonly FaultWindow[];
  readonly verdict: FaultVerdict;
  readonly unknownOps: number;
  readonly failuresByCode: Readonly<Record<string, number>>;
  readonly command?: string;
}
