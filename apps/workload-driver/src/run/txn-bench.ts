import { readFile } from 'node:fs/promises';
import { checkTxnRun } from '@lockfabric/harness';
import type { HistoryEvent, HistoryRecorder } from '@lockfabric/check';
import { ConfigError, errorMessage } from '@lockfabric/ports';
import { TATP_DEFAULT_SUBSCRIBERS, TPCC_DEFAULT_SCAN_NS, TPCC_DEFAULT_WAREHOUSES, parseFissTrace, traceTemplates, txnWorkloadOf } from '@lockfabric/workloads';
import type { PrecedenceEdge } from '@lockfabric/check';
import type { TxnRunSpec, TxnWorkloadSpec, WorkloadSpec } from '@lockfabric/workloads';
import type { FlagReader, Options } from '../cli/args.js';
import { SMALLBANK_FLAGS, readSmallBankWorkload } from './smallbank-flags.js';
import type { SmallBankCheck } from '@lockfabric/smallbank';

/** Flags of transactional bench workloads. */
export const TXN_FLAGS: Options = {
  workload: { type: 'string', short: 'w' },
  warehouses: { type: 'string' },
  'colocate-warehouses': { type: 'boolean' },
  subscribers: { type: 'string' },
  'txn-think-ns': { type: 'string' },
  'max-attempts': { type: 'string' },
  'mutant-early-release': { type: 'boolean' },
  'long-read-probability': { type: 'string' },
  'long-read-ns': { type: 'string' },
  'long-read-slots': { type: 'string' },
  ...SMALLBANK_FLAGS,
};

/** ShiftLock §4.4 (after FissLock's Table 1): execution time per transaction. */
export const TXN_EXECUTE_NS: Readonly<Record<string, number>> = { tatp: 2_800, tpcc: 7_000, trace: 0, smallbank: 0 };
/** FissLock §7.4 aborts transactions that run longer than 10 ms; per acquire on sim. */
export const SIM_TXN_TIMEOUT_MS = 10;
/** Real-time substrates: a verb costs 100 µs to ms, so an acquire gets far longer. */
export const REALTIME_TXN_TIMEOUT_MS = 2_000;

const LONG_READ_FLAGS = ['long-read-probability', 'long-read-ns', 'long-read-slots'];

/** DSLR Fig. 10/11's long-running reads, from their flags (none given: plain TPC-C). */
function readLongReads(values: Record<string, unknown>, reader: FlagReader): Pick<Extract<TxnWorkloadSpec, { kind: 'tpcc' }>, 'longReads'> {
  if (!LONG_READ_FLAGS.some((flag) => values[flag] !== undefined)) return {};
  if (values['long-read-probability'] === undefined) reader.problems.push('--long-read-ns and --long-read-slots need --long-read-probability');
  const probability = reader.number('long-read-probability', 0, { min: 0, max: 1 });
  const scanNs = reader.number('long-read-ns', TPCC_DEFAULT_SCAN_NS, { min: 0 });
  const slots = reader.number('long-read-slots', 1, { integer: true, min: 1, max: 64 });
  return { longReads: { probability, scanNs, slots } };
}

/**
 * `--colocate-warehouses` (FissLock §7.4): warehouse w and its clients on compute node w mod n,
 * its locks homed there under ParLock's `lock mod n`. On sim the compute nodes are numbered after
 * the one memory node, 1…n; other substrates number them by the cluster, so only sim takes it.
 */
function colocation(values: Record<string, unknown>, reader: FlagReader, warehouses: number, substrate: string): { colocate?: number[] } {
  if (values['colocate-warehouses'] !== true) return {};
  if (substrate !== 'sim') reader.problems.push('--colocate-warehouses: runs on --substrate sim only');
  const n = Number(values['compute-nodes'] ?? 2);
  if (!Number.isSafeInteger(n) || n < 1) return {};
  if (warehouses % n !== 0) reader.problems.push(`--colocate-warehouses: --warehouses ${warehouses} must be a multiple of --compute-nodes ${n}`);
  return { colocate: Array.from({ length: n }, (_, i) => 1 + i) };
}

/** Workload-shape flags that a transactional workload defines itself. */
const MICRO_ONLY = ['locks', 'read-ratio', 'distribution', 'lock-ids', 'cs-ns'];

/**
 * Reads `--workload` and its flags; for `micro` returns the spec as it is. Problems go to
 * `reader.problems` (the command lists them all and exits 2).
 */
export async function readTxnWorkload(values: Record<string, unknown>, reader: FlagReader, spec: WorkloadSpec, substrate: string): Promise<WorkloadSpec> {
  const name = reader.string('workload', 'micro');
  const kind = name.startsWith('trace:') ? 'trace' : name;
  const given = (flag: string) => values[flag] !== undefined;
  if (!['micro', 'tatp', 'tpcc', 'trace', 'smallbank'].includes(kind)) {
    reader.problems.push(`--workload: expected micro, tatp, tpcc, trace:FILE, smallbank, objectstore, btree or dynamic, got ${JSON.stringify(name)}`);
    return spec;
  }
  const smallbank = readSmallBankWorkload(values, reader, kind === 'smallbank');
  for (const flag of ['warehouses', 'colocate-warehouses', 'subscribers', 'txn-think-ns', 'max-attempts', 'mutant-early-release', ...LONG_READ_FLAGS]) {
    if (kind === 'micro' && given(flag)) reader.problems.push(`--${flag} applies to transactional workloads (--workload tatp|tpcc|smallbank|trace:FILE)`);
  }
  if (kind === 'micro') return spec;
  for (const flag of MICRO_ONLY) if (given(flag)) reader.problems.push(`--${flag} applies to --workload micro; ${kind} defines its own locks and modes`);
  if (kind !== 'tpcc' && given('warehouses')) reader.problems.push('--warehouses applies to --workload tpcc');
  if (kind !== 'tpcc' && given('colocate-warehouses')) reader.problems.push('--colocate-warehouses applies to --workload tpcc');
  if (kind !== 'tatp' && given('subscribers')) reader.problems.push('--subscribers applies to --workload tatp');
  if (kind !== 'micro' && kind !== 'tpcc') for (const flag of LONG_READ_FLAGS) if (given(flag)) reader.problems.push(`--${flag} applies to --workload tpcc (DSLR Fig. 10 scans its CUSTOMER table)`);
  let workload: TxnWorkloadSpec | undefined;
  if (smallbank) workload = smallbank;
  else if (kind === 'tatp') workload = { kind, subscribers: reader.number('subscribers', TATP_DEFAULT_SUBSCRIBERS, { integer: true, min: 1 }) };
  else if (kind === 'tpcc') {
    const warehouses = reader.number('warehouses', TPCC_DEFAULT_WAREHOUSES, { integer: true, min: 1 });
    workload = { kind, warehouses, ...readLongReads(values, reader), ...colocation(values, reader, warehouses, substrate) };
  }
  else {
    const file = name.slice('trace:'.length);
    if (file === '') reader.problems.push('--workload trace:FILE needs a file name');
    else {
      try {
        workload = { kind: 'trace', name: file, transactions: traceTemplates(parseFissTrace(await readFile(file, 'utf8'))) };
      } catch (error) {
        if (error instanceof ConfigError) reader.problems.push(...error.issues.map((i) => `--workload ${name}: ${i}`));
        else reader.problems.push(`--workload ${name}: ${errorMessage(error)}`);
      }
    }
  }
  const executeNs = reader.number('txn-think-ns', TXN_EXECUTE_NS[kind] ?? 0, { min: 0 });
  const maxAttempts = reader.optionalNumber('max-attempts', { integer: true, min: 1 });
  if (!workload) return spec;
  const txn: TxnRunSpec = { workload, executeNs, seed: spec.seed, ...(maxAttempts !== undefined ? { maxAttempts } : {}), ...(values['mutant-early-release'] === true ? { mutantEarlyRelease: true } : {}) };
  const timeoutMs = spec.timeoutMs ?? (substrate === 'sim' ? SIM_TXN_TIMEOUT_MS : REALTIME_TXN_TIMEOUT_MS);
  return { ...spec, locks: txnWorkloadOf(txn).lockCount, timeoutMs, transactions: txn };
}

/** The transaction part of a bench report (`transactions` in `--json`). */
export interface BenchTxnReport {
  readonly workload: string;
  readonly committed: number;
  readonly committedPerSec: number;
  /** Latency (first acquire to last release) of every committed transaction, all types together. */
  readonly p50Us: number;
  readonly p99Us: number;
  readonly locksPerTxn: number;
  readonly sharedShare: number;
  readonly aborts: number;
  readonly abortsByCode: Readonly<Record<string, number>>;
  readonly gaveUpByCode: Readonly<Record<string, number>>;
  readonly unfinished: number;
  readonly byType: Readonly<Record<string, { committed: number; p50Us: number; p99Us: number; meanAttempts: number }>>;
  readonly serializable: boolean;
  /** One cycle of the precedence graph when not serializable. */
  readonly cycle?: readonly PrecedenceEdge[];
  /** Histories that did not follow their client's transaction stream (should be none). */
  readonly logMismatches: readonly string[];
  /** SmallBank: the balances' end-of-run invariant (conservation, every committed transfer visible). */
  readonly smallbank?: SmallBankCheck;
}

export function txnReport(history: HistoryRecorder | readonly HistoryEvent[], txn: TxnRunSpec, elapsedNs: number): BenchTxnReport {
  const check = checkTxnRun(history, txn, elapsedNs);
  const s = check.summary;
  const latencies = check.replay.committed.map((t) => t.endNs - t.startNs).sort((a, b) => a - b);
  return {
    workload: s.workload,
    committed: s.committed,
    committedPerSec: s.committedPerSec,
    p50Us: percentileUs(latencies, 0.5),
    p99Us: percentileUs(latencies, 0.99),
    locksPerTxn: s.locksPerTxn,
    sharedShare: s.sharedShare,
    aborts: s.aborts,
    abortsByCode: s.abortsByCode,
    gaveUpByCode: s.gaveUpByCode,
    unfinished: s.unfinished,
    byType: s.byType,
    serializable: check.serializability.ok,
    ...(check.serializability.cycle ? { cycle: check.serializability.cycle.slice(0, 20) } : {}),
    logMismatches: check.replay.mismatches.slice(0, 20),
  };
}

/** The q-quantile (nearest rank) of ascending nanosecond values, in µs; 0 when there are none. */
function percentileUs(sortedNs: readonly number[], q: number): number {
  if (sortedNs.length === 0) return 0;
  return sortedNs[Math.min(sortedNs.length - 1, Math.max(0, Math.ceil(q * sortedNs.length) - 1))]! / 1_000;
}

export function describeTxnReport(t: BenchTxnReport): string {
  const lines = [
    `  transactions        ${t.workload}: ${t.committed} committed, ${Math.round(t.committedPerSec).toLocaleString('en-US')} txn/s, p50 ${t.p50Us.toFixed(1)} µs, p99 ${t.p99Us.toFixed(1)} µs, ${t.locksPerTxn.toFixed(2)} locks/txn (${(t.sharedShare * 100).toFixed(1)} % shared), ${t.aborts} aborts${t.unfinished ? `, ${t.unfinished} unfinished` : ''}`,
  ];
  for (const [type, v] of Object.entries(t.byType)) {
    if (v.committed > 0) lines.push(`    ${type.padEnd(24)}${String(v.committed).padStart(8)}  p50 ${v.p50Us.toFixed(1).padStart(9)} µs  p99 ${v.p99Us.toFixed(1).padStart(9)} µs  attempts ${v.meanAttempts.toFixed(2)}`);
  }
  if (t.aborts > 0) lines.push(`  aborts by cause     ${Object.entries(t.abortsByCode).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (Object.keys(t.gaveUpByCode).length > 0) lines.push(`  given up            ${Object.entries(t.gaveUpByCode).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (t.serializable) lines.push('  serializability     ok (precedence graph acyclic)');
  else lines.push(`  serializability     VIOLATED: cycle ${(t.cycle ?? []).map((e) => `${e.from} -[lock ${e.lock}]-> ${e.to}`).join(', ')}`);
  for (const m of t.logMismatches) lines.push(`  log mismatch        ${m}`);
  const sb = t.smallbank;
  if (sb) {
    lines.push(`  balances            ${sb.ok ? 'ok' : 'VIOLATED'}: ${sb.accounts.toLocaleString('en-US')} accounts, ${sb.committedTransfers} committed transfers, sum ${sb.total} (expected ${sb.expectedTotal}${sb.conserved ? ', conserved' : ', NOT conserved'}), ${sb.mismatchedAccounts} accounts differ from the committed log`);
    for (const e of sb.examples) lines.push(`    ${e}`);
  }
  return lines.join('\n');
}
