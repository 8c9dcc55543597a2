import type { HistoryEvent, HistoryRecorder } from '@lockfabric/check';
import type { LockMode } from '@lockfabric/ports';
import { build } from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';
import type { TxnStream, TxnWorkload } from './generator.js';
import { TXN_MAX_ATTEMPTS } from './types.js';
import type { TxnTemplate } from './types.js';

/** One lock of a committed transaction: held over [acquiredNs, releasedNs) (acquire ok, release invoke). */
export interface TxnHold {
  readonly lock: number;
  readonly mode: LockMode;
  readonly acquiredNs: number;
  readonly releasedNs: number;
}

/** One committed transaction of the transaction log. */
export interface TxnLogEntry {
  /** `<client key>#<n>`: the client's n-th transaction (0-based). */
  readonly id: string;
  readonly client: string;
  readonly seq: number;
  readonly type: string;
  /** Attempts made, the committed one included. */
  readonly attempts: number;
  /** Error names of the failed acquires that aborted earlier attempts, in order. */
  readonly aborts: readonly string[];
  /** First acquire of the first attempt. */
  readonly startNs: number;
  /** Last release done (ok or failed). */
  readonly endNs: number;
  /** The committed attempt's holds, in acquisition order. */
  readonly holds: readonly TxnHold[];
}

/** Codes of the ports' errors by class name (histories record names). */
const CODE_BY_NAME: Readonly<Record<string, string>> = {
  LockTimeoutError: 'LOCK_TIMEOUT',
  LockAbortedError: 'LOCK_ABORTED',
  LeaseExpiredError: 'LEASE_EXPIRED',
  FabricAccessError: 'FABRIC_ACCESS',
  TableLostError: 'TABLE_LOST',
  ConfigError: 'CONFIG',
  MalformedInputError: 'MALFORMED_INPUT',
};

const LEASE_EXPIRED_NAME = 'LeaseExpiredError';

export function errorCodeOfName(name: string): string {
  return CODE_BY_NAME[name] ?? name;
}

/** What a history says about transactions: the committed ones, and aborts of every attempt. */
export interface TxnLogReplay {
  readonly committed: TxnLogEntry[];
  /** Aborted attempts by error code, whether or not their transaction committed later. */
  readonly abortsByCode: Map<string, number>;
  /** Transactions started and not committed when the history ends (run stopped, node failed). */
  readonly unfinished: number;
  /** Transactions given up after `maxAttempts` aborted attempts, by the code of the last abort. */
  readonly gaveUpByCode: Map<string, number>;
  /** Histories that did not follow their client's stream (a bug in the recorder or a foreign history). */
  readonly mismatches: string[];
}

interface Attempt {
  readonly holds: Map<number, { lock: number; mode: LockMode; acquiredNs: number; releasedNs?: number }>;
  acquired: number;
  releasesDone: number;
  failed?: string;
  /** A release of this attempt failed with LeaseExpiredError: its commit is void. */
  leaseExpired?: boolean;
}

/**
 * Rebuilds the transaction log from a history. Every client's transactions are a pure function of
 * the run seed and its client key (see `StreamRandom`), so the driver replays each client's
 * stream: the n-th transaction's lock set tells where each attempt ends (all its locks taken and
 * given back: committed; a failed acquire and the rollback's releases: aborted, and the same
 * transaction is retried). This works alike for sim, embedded and live, whose compute nodes send
 * only the history back.
 */
export function replayTxnLog(history: HistoryRecorder | readonly HistoryEvent[], workload: TxnWorkload, maxAttempts = TXN_MAX_ATTEMPTS): TxnLogReplay {
  const byClient = new Map<string, HistoryEvent[]>();
  for (const event of history) {
    let list = byClient.get(event.client);
    if (!list) byClient.set(event.client, (list = []));
    list.push(event);
  }
  const committed: TxnLogEntry[] = [];
  const abortsByCode = new Map<string, number>();
  const mismatches: string[] = [];
  const gaveUpByCode = new Map<string, number>();
  let unfinished = 0;
  for (const [client, events] of byClient) {
    const stream: TxnStream = workload.stream(client);
    let template: TxnTemplate | undefined;
    let seq = -1;
    let startNs = 0;
    let attempts = 0;
    let aborts: string[] = [];
    let attempt: Attempt | undefined;
    let broken = false;
    for (const e of events) {
      if (!template) {
        template = stream.next();
        seq++;
        startNs = e.timeNs;
        attempts = 0;
        aborts = [];
      }
      if (!attempt) {
        attempt = { holds: new Map(), acquired: 0, releasesDone: 0 };
        attempts++;
      }
      const wanted = template.locks.find((l) => l.lock === e.lock);
      if (!wanted) {
        mismatches.push(`${client}: event on lock ${e.lock} is not in its transaction #${seq} (${template.type})`);
        broken = true;
        break;
      }
      if (e.op === 'acquire') {
        if (e.phase === 'ok') {
          attempt.holds.set(e.lock, { lock: e.lock, mode: e.mode, acquiredNs: e.timeNs });
          attempt.acquired++;
        } else if (e.phase === 'fail') attempt.failed = e.error ?? 'Error';
      } else if (e.phase === 'invoke') {
        const hold = attempt.holds.get(e.lock);
        if (hold) hold.releasedNs = e.timeNs;
      } else {
        attempt.releasesDone++;
        if (e.phase === 'fail' && e.error === LEASE_EXPIRED_NAME && attempt.acquired === template.locks.length) attempt.leaseExpired = true;
      }
      const allReleased = attempt.releasesDone === attempt.acquired;
      // Every lock taken and given back, but a lease ran out on the way: the transaction loop voids
      // such a commit (its lock may have been skipped), so it is an abort here too.
      if (attempt.failed === undefined && attempt.leaseExpired && allReleased) attempt.failed = LEASE_EXPIRED_NAME;
      if (attempt.failed !== undefined && allReleased) {
        const code = errorCodeOfName(attempt.failed);
        abortsByCode.set(code, (abortsByCode.get(code) ?? 0) + 1);
        aborts.push(attempt.failed);
        attempt = undefined;
        if (attempts >= maxAttempts) {
          gaveUpByCode.set(code, (gaveUpByCode.get(code) ?? 0) + 1);
          template = undefined;
        }
      } else if (attempt.failed === undefined && attempt.acquired === template.locks.length && allReleased) {
        const holds = template.locks.map((l) => {
          const h = attempt!.holds.get(l.lock)!;
          return { lock: h.lock, mode: h.mode, acquiredNs: h.acquiredNs, releasedNs: h.releasedNs ?? e.timeNs };
        });
        committed.push({ id: `${client}#${seq}`, client, seq, type: template.type, attempts, aborts, startNs, endNs: e.timeNs, holds });
        template = undefined;
        attempt = undefined;
      }
    }
    if (!broken && template) unfinished++;
  }
  return { committed, abortsByCode, unfinished, gaveUpByCode, mismatches };
}

/** Transaction figures of a run, as reports print them. */
export interface TxnSummary {
  readonly workload: string;
  readonly committed: number;
  /** Committed transactions per second of the run's (virtual or real) time. */
  readonly committedPerSec: number;
  readonly aborts: number;
  readonly abortsByCode: Readonly<Record<string, number>>;
  readonly unfinished: number;
  /** Transactions given up after too many aborted attempts, by the last abort's code. */
  readonly gaveUpByCode: Readonly<Record<string, number>>;
  /** Mean locks per committed transaction. */
  readonly locksPerTxn: number;
  /** Share of shared-mode locks among committed transactions' locks. */
  readonly sharedShare: number;
  /** Per transaction type: commits, latency (first acquire to last release) in µs. */
  readonly byType: Readonly<Record<string, { committed: number; p50Us: number; p99Us: number; meanAttempts: number }>>;
}

function histogram(): Histogram {
  return build({ lowestDiscernibleValue: 1, highestTrackableValue: 2, numberOfSignificantValueDigits: 3, autoResize: true, bitBucketSize: 32 });
}

/** Summarizes a transaction log over `elapsedNs` of run time. */
export function summarizeTxns(workload: TxnWorkload, replay: TxnLogReplay, elapsedNs: number): TxnSummary {
  const per = new Map<string, { h: Histogram; n: number; attempts: number }>();
  for (const type of workload.types) per.set(type, { h: histogram(), n: 0, attempts: 0 });
  let locks = 0;
  let shared = 0;
  for (const t of replay.committed) {
    let entry = per.get(t.type);
    if (!entry) per.set(t.type, (entry = { h: histogram(), n: 0, attempts: 0 }));
    entry.h.recordValue(Math.max(1, Math.round(t.endNs - t.startNs)));
    entry.n++;
    entry.attempts += t.attempts;
    locks += t.holds.length;
    for (const h of t.holds) if (h.mode === 'shared') shared++;
  }
  const byType: Record<string, { committed: number; p50Us: number; p99Us: number; meanAttempts: number }> = {};
  for (const [type, { h, n, attempts }] of per) {
    byType[type] = { committed: n, p50Us: n ? h.getValueAtPercentile(50) / 1e3 : 0, p99Us: n ? h.getValueAtPercentile(99) / 1e3 : 0, meanAttempts: n ? attempts / n : 0 };
  }
  const abortsByCode = Object.fromEntries([...replay.abortsByCode].sort((a, b) => a[0].localeCompare(b[0])));
  const committed = replay.committed.length;
  return {
    workload: workload.name,
    committed,
    committedPerSec: elapsedNs > 0 ? committed / (elapsedNs / 1e9) : 0,
    aborts: [...replay.abortsByCode.values()].reduce((a, b) => a + b, 0),
    abortsByCode,
    unfinished: replay.unfinished,
    gaveUpByCode: Object.fromEntries([...replay.gaveUpByCode].sort((a, b) => a[0].localeCompare(b[0]))),
    locksPerTxn: committed ? locks / committed : 0,
    sharedShare: locks ? shared / locks : 0,
    byType,
  };
}
