/**
 * Reports that compare protocols: `bench --report` (one or more protocols, one workload) and
 * `demo` (every protocol of both families). `report.json` holds exactly one of these objects; a
 * row is the `bench --json` object of one protocol, of which the report reads the fields below.
 */

/** One point of an acquire-latency CDF: `fraction` of the acquires took at most `us`. */
export interface CdfPoint {
  readonly fraction: number;
  readonly us: number;
}

export interface VerbsPerOp {
  readonly read: number;
  readonly write: number;
  readonly cas: number;
  readonly faa: number;
  readonly maskedCas: number;
  readonly maskedFaa: number;
  readonly total: number;
}

export type RowVerdict = 'ok' | 'violation' | 'liveness' | 'unchecked';

export interface ComparisonRow {
  readonly protocol: string;
  readonly substrate: string;
  /** `rdma` (the emulated NIC) or `switch` (the emulated switch); demo rows carry it. */
  readonly family?: 'rdma' | 'switch' | 'redis';
  /** Successful acquires per second (what the papers call goodput: failed attempts do not count). */
  readonly throughput: number;
  readonly latencyUs: { readonly p50: number; readonly p99: number };
  readonly latencyCdfUs?: readonly CdfPoint[];
  readonly verbsPerAcquire: VerbsPerOp;
  readonly acquires: number;
  readonly failures: number;
  readonly violations: number;
  readonly livenessViolations: number;
  readonly checked: boolean;
  /** Switch family: the share of acquires whose grant the switch decided itself. */
  readonly switchGrantShare?: number;
  readonly verdict?: RowVerdict;
  /** Transactional workloads: committed transactions per second, the goodput the papers plot. */
  readonly transactions?: { readonly workload: string; readonly committedPerSec: number };
}

export interface BenchRunReport {
  readonly kind: 'bench';
  readonly version: 1;
  readonly title?: string;
  readonly command?: string;
  readonly results: readonly ComparisonRow[];
}

export interface DemoRunReport {
  readonly kind: 'demo';
  readonly version: 1;
  readonly substrate: string;
  readonly workload: Readonly<Record<string, string | number | boolean>>;
  /** Round trips on this machine, median (and mean, from reports that have it); NATS is in-CLI: both ends in the CLI. */
  readonly transport?: { readonly grpcRttUs: number; readonly natsRttUs: number; readonly grpcRttMeanUs?: number; readonly natsRttMeanUs?: number };
  readonly wallMs?: number;
  readonly results: readonly ComparisonRow[];
  /** The demo's transactions section: one short 2PL run per representative protocol. */
  readonly transactions?: DemoTransactions;
}

export interface DemoTransactions {
  readonly workload: string;
  readonly warehouses?: number;
  readonly clients: number;
  readonly operations: number;
  readonly results: readonly DemoTxnResult[];
}

export interface DemoTxnResult {
  readonly protocol: string;
  readonly family?: string;
  readonly committed: number;
  readonly committedPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly aborts: number;
  readonly abortsByCode: Readonly<Record<string, number>>;
  readonly serializable: boolean;
  readonly verdict: string;
}

export type ComparisonReport = BenchRunReport | DemoRunReport;

/** The checker's word on a row: its own `verdict` when given, else derived from the counts. */
export function rowVerdict(row: ComparisonRow): RowVerdict {
  if (row.verdict) return row.verdict;
  if (!row.checked) return 'unchecked';
  if (row.violations > 0) return 'violation';
  return row.livenessViolations > 0 ? 'liveness' : 'ok';
}
