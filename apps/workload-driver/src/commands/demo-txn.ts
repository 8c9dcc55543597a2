import { protocolById } from '@lockfabric/lock-catalog';
import type { HistoryEvent, HistoryRecorder } from '@lockfabric/check';
import { txnWorkloadOf } from '@lockfabric/workloads';
import type { TxnRunSpec, WorkloadSpec } from '@lockfabric/workloads';
import { familyOf } from '../report/family.js';
import { renderTable } from '../report/table.js';
import { REALTIME_TXN_TIMEOUT_MS, SIM_TXN_TIMEOUT_MS, TXN_EXECUTE_NS, txnReport } from '../run/txn-bench.js';

/**
 * The demo's transactions section: a short TPC-C run (strict 2PL, ShiftLock Fig. 10's workload)
 * over one protocol of each kind — a spinning RDMA lock (caslock), a handover RDMA lock (mcs, the
 * queue lock of ShiftLock Fig. 10), a switch lock (fisslock).
 * One warehouse keeps it contended, so aborts and their causes show up in a run of seconds.
 */
export const DEMO_TXN_PROTOCOLS = ['caslock', 'mcs', 'fisslock'] as const;
export const DEMO_TXN_DEFAULT_OPERATIONS = 200;

/** One protocol's transaction figures, as `demo --json` and the HTML report carry them. */
export interface DemoTxnRow {
  readonly protocol: string;
  readonly family: ReturnType<typeof familyOf>;
  readonly committed: number;
  readonly committedPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly aborts: number;
  readonly abortsByCode: Readonly<Record<string, number>>;
  readonly unfinished: number;
  /** Conflict serializability of the committed transactions (precedence graph acyclic). */
  readonly serializable: boolean;
  /**
   * `ok` when the history passed exclusion, the transactions serialize and the log follows the
   * streams; `unchecked` when the run kept no history to check exclusion on.
   */
  readonly verdict: 'ok' | 'violation' | 'unchecked';
}

/** The transaction run of the demo: TPC-C, one warehouse, the demo's 16 clients. */
export function demoTxnSpec(operations: number, substrate: string): WorkloadSpec {
  const txn: TxnRunSpec = { workload: { kind: 'tpcc', warehouses: 1 }, executeNs: TXN_EXECUTE_NS['tpcc'] ?? 0, seed: 1 };
  return {
    clients: 16,
    locks: txnWorkloadOf(txn).lockCount,
    readRatio: 0,
    distribution: 'uniform',
    operations,
    thinkNs: 0,
    criticalSectionNs: 0,
    seed: 1,
    timeoutMs: substrate === 'sim' ? SIM_TXN_TIMEOUT_MS : REALTIME_TXN_TIMEOUT_MS,
    transactions: txn,
  };
}

/** Turns a run's history into the demo row (the transaction log is rebuilt from the history). */
export function demoTxnRow(protocol: string, spec: WorkloadSpec, history: HistoryRecorder | readonly HistoryEvent[], elapsedNs: number, violations: number | undefined): DemoTxnRow {
  const t = txnReport(history, spec.transactions!, elapsedNs);
  const broken = (violations ?? 0) > 0 || !t.serializable || t.logMismatches.length > 0;
  return {
    protocol,
    family: familyOf(protocol),
    committed: t.committed,
    committedPerSec: t.committedPerSec,
    p50Us: t.p50Us,
    p99Us: t.p99Us,
    aborts: t.aborts,
    abortsByCode: t.abortsByCode,
    unfinished: t.unfinished,
    serializable: t.serializable,
    verdict: broken ? 'violation' : violations === undefined ? 'unchecked' : 'ok',
  };
}

/** `--txn-protocols`: ids from the catalog (comma-separated), or `none`. Problems go to `problems`. */
export function readTxnProtocols(value: string | undefined, problems: string[]): string[] {
  if (value === undefined) return [...DEMO_TXN_PROTOCOLS];
  if (value === 'none') return [];
  const ids = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const id of ids) {
    try {
      protocolById(id);
    } catch {
      problems.push(`--txn-protocols: unknown protocol ${JSON.stringify(id)}`);
    }
  }
  if (ids.length === 0) problems.push('--txn-protocols: expected protocol ids separated by commas, or none');
  return ids;
}

export function demoTxnTable(rows: readonly DemoTxnRow[]): string {
  return renderTable(
    ['protocol', 'family', 'committed', 'txn/s', 'p50 µs', 'p99 µs', 'aborts by cause', 'serializable'],
    rows.map((r) => [
      r.protocol,
      r.family,
      r.committed,
      Math.round(r.committedPerSec),
      Math.round(r.p50Us * 10) / 10,
      Math.round(r.p99Us * 10) / 10,
      r.aborts === 0 ? '0' : Object.entries(r.abortsByCode).map(([k, v]) => `${k} ${v}`).join(', '),
      r.verdict !== 'violation' ? r.verdict : r.serializable ? 'violation (exclusion)' : 'VIOLATED',
    ]),
  );
}
