import { ConfigError } from '@lockfabric/ports';
import type { LockMode } from '@lockfabric/ports';
import type { TpccLongReads } from './tpcc.js';

/** TPCC_DEFAULT_WAREHOUSES of tpcc.ts (which imports this module, so the value is repeated here). */
const TPCC_DEFAULT_WAREHOUSES_FOR_CHECK = 10;

/** One lock a transaction takes, and in which mode. */
export interface TxnLockRequest {
  readonly lock: number;
  readonly mode: LockMode;
}

/**
 * A transaction as the lock layer sees it: a type name (for per-type latency) and its lock set,
 * normalized by {@link normalizeLockSet}: ascending lock ids, each lock once.
 */
export interface TxnTemplate {
  readonly type: string;
  readonly locks: readonly TxnLockRequest[];
  /** Execution time of this transaction, when not the run's `executeNs` (a long-running read). */
  readonly executeNs?: number;
  /** Lease slots each acquire draws (DSLR §5.1 multi-slot leasing); protocols without leases ignore it. */
  readonly slots?: number;
}

/** Strict 2PL keeps a transaction's locks to this many (a wider set is a generator bug). */
export const MAX_TXN_LOCKS = 16;

/**
 * Sorts a wanted lock set into acquisition order (ascending id: with every transaction taking
 * locks in one global order no wait cycle can form) and merges duplicates: a lock wanted in both
 * modes is taken exclusive. Throws {@link ConfigError} for an empty or too wide set.
 */
export function normalizeLockSet(wanted: readonly TxnLockRequest[]): TxnLockRequest[] {
  const modes = new Map<number, LockMode>();
  for (const { lock, mode } of wanted) {
    if (!Number.isInteger(lock) || lock < 0 || lock > 0xffff_ffff) throw new ConfigError([`transaction lock id ${lock} is not an integer in 0..${0xffff_ffff}`]);
    if (modes.get(lock) !== 'exclusive') modes.set(lock, mode);
  }
  if (modes.size === 0) throw new ConfigError(['a transaction takes at least one lock']);
  if (modes.size > MAX_TXN_LOCKS) throw new ConfigError([`a transaction takes at most ${MAX_TXN_LOCKS} locks (got ${modes.size})`]);
  return [...modes].sort((a, b) => a[0] - b[0]).map(([lock, mode]) => ({ lock, mode }));
}

/** Builds a normalized template. */
export function txn(type: string, wanted: readonly TxnLockRequest[]): TxnTemplate {
  return { type, locks: normalizeLockSet(wanted) };
}

/** Which transactions clients run. `trace` replays a parsed FissLock-format trace (see trace.ts). */
export type TxnWorkloadSpec =
  | { readonly kind: 'tatp'; readonly subscribers?: number }
  | { readonly kind: 'tpcc'; readonly warehouses?: number; readonly longReads?: TpccLongReads; readonly colocate?: readonly number[] }
  | { readonly kind: 'trace'; readonly name?: string; readonly transactions: readonly TxnTemplate[] }
  | SmallBankWorkloadSpec;

/**
 * SmallBank (ShiftLock Fig. 11): accounts whose balances live in Redis at `redisUrl`; the lock
 * layer locks accounts, a `TxnData` reads and writes their balances (see smallbank.ts).
 */
export interface SmallBankWorkloadSpec {
  readonly kind: 'smallbank';
  readonly accounts?: number;
  readonly redisUrl?: string;
  /** Test-only mutant: a transfer locks one of its two accounts (breaks conservation). */
  readonly mutantSkipLock?: boolean;
}

/** Randomized exponential backoff between attempts of an aborted transaction. */
export interface TxnBackoffPolicy {
  readonly initialNs: number;
  readonly maxNs: number;
}

/** Default retry backoff: 5 µs doubling to 1 ms (transactions abort on contention, not on outages). */
export const TXN_BACKOFF: TxnBackoffPolicy = { initialNs: 5_000, maxNs: 1_000_000 };

export const TXN_MAX_ATTEMPTS = 64;

/**
 * A transactional run, carried in `WorkloadSpec.transactions`. With it, `runClients` runs the
 * transaction loop instead of the single-lock loop; `operations` then counts transactions.
 */
export interface TxnRunSpec {
  readonly workload: TxnWorkloadSpec;
  /** Execution time: held after the last lock is granted, before commit (ShiftLock §4.4: 2.8 µs TATP, 7 µs TPC-C). */
  readonly executeNs: number;
  /**
   * Seed of the population (TATP rows per subscriber) and of every client's transaction stream
   * (mixed with the client key). Set once by the driver, so every process of a run, and the driver
   * replaying the streams for the transaction log, draw the same transactions.
   */
  readonly seed: number;
  readonly backoff?: TxnBackoffPolicy;
  /**
   * Attempts of one transaction before the client gives it up and draws the next one (default
   * TXN_MAX_ATTEMPTS): a transaction the protocol can never grant (more locks than its client can
   * hold at once) must not stall its client forever.
   */
  readonly maxAttempts?: number;
  /**
   * Mutant, for proving the serializability checker: a transaction of two or more locks releases
   * its first lock right after acquiring it, before taking the next (breaks two-phase locking).
   */
  readonly mutantEarlyRelease?: boolean;
  /**
   * Mutant, for proving the lease rule: a transaction commits even when a release says its lease
   * ran out first (the history replay then no longer matches what the clients did).
   */
  readonly mutantCommitExpiredLease?: boolean;
}

/** Every problem with a transactional run spec (empty when valid). */
export function validateTxnRunSpec(spec: TxnRunSpec, lockCount?: number): string[] {
  const problems: string[] = [];
  const w = spec.workload as TxnWorkloadSpec | undefined;
  if (!w || typeof w !== 'object') problems.push('transactions.workload is missing');
  else if (w.kind === 'tatp') {
    if (w.subscribers !== undefined && (!Number.isSafeInteger(w.subscribers) || w.subscribers < 1)) problems.push(`tatp subscribers must be a whole number ≥ 1 (got ${String(w.subscribers)})`);
  } else if (w.kind === 'tpcc') {
    if (w.warehouses !== undefined && (!Number.isSafeInteger(w.warehouses) || w.warehouses < 1)) problems.push(`tpcc warehouses must be a whole number ≥ 1 (got ${String(w.warehouses)})`);
    const c = w.colocate;
    if (c !== undefined) {
      if (!Array.isArray(c) || c.length === 0 || !c.every((n) => Number.isSafeInteger(n) && n >= 0)) problems.push('tpcc colocate must list the compute node ids (whole numbers ≥ 0) in cluster order');
      else if ((w.warehouses ?? TPCC_DEFAULT_WAREHOUSES_FOR_CHECK) % c.length !== 0) problems.push(`tpcc colocate: warehouses (${w.warehouses ?? TPCC_DEFAULT_WAREHOUSES_FOR_CHECK}) must be a multiple of the ${c.length} compute nodes`);
      if (w.longReads !== undefined && w.longReads.probability > 0) problems.push('tpcc colocate does not combine with longReads');
    }
    const r = w.longReads;
    if (r !== undefined) {
      if (typeof r !== 'object' || r === null) problems.push('tpcc longReads must be an object');
      else {
        if (!(typeof r.probability === 'number' && r.probability >= 0 && r.probability <= 1)) problems.push(`tpcc longReads.probability must be in 0..1 (got ${String(r.probability)})`);
        if (!(typeof r.scanNs === 'number' && Number.isFinite(r.scanNs) && r.scanNs >= 0)) problems.push(`tpcc longReads.scanNs must be a number ≥ 0 (got ${String(r.scanNs)})`);
        if (!(Number.isSafeInteger(r.slots) && r.slots >= 1 && r.slots <= 64)) problems.push(`tpcc longReads.slots must be a whole number in 1..64 (got ${String(r.slots)})`);
      }
    }
  } else if (w.kind === 'trace') {
    if (!Array.isArray(w.transactions) || w.transactions.length === 0) problems.push('a trace workload needs at least one transaction');
    else if (lockCount !== undefined) {
      const beyond = w.transactions.find((t: TxnTemplate) => t.locks.some((l) => l.lock >= lockCount));
      if (beyond) problems.push(`trace transaction of type ${beyond.type} takes a lock ≥ locks (${lockCount})`);
    }
  } else if (w.kind === 'smallbank') {
    if (w.accounts !== undefined && (!Number.isSafeInteger(w.accounts) || w.accounts < 2 || w.accounts > 0xffff_ffff)) problems.push(`smallbank accounts must be a whole number in 2..${0xffff_ffff} (got ${String(w.accounts)})`);
    if (w.redisUrl !== undefined && typeof w.redisUrl !== 'string') problems.push('smallbank redisUrl must be a string');
  } else problems.push(`transactions.workload.kind must be tatp, tpcc, trace or smallbank (got ${JSON.stringify((w as { kind?: unknown }).kind)})`);
  if (typeof spec.executeNs !== 'number' || !Number.isFinite(spec.executeNs) || spec.executeNs < 0) problems.push(`transactions.executeNs must be a number ≥ 0 (got ${String(spec.executeNs)})`);
  if (!Number.isSafeInteger(spec.seed)) problems.push(`transactions.seed must be a whole number (got ${String(spec.seed)})`);
  if (spec.maxAttempts !== undefined && (!Number.isSafeInteger(spec.maxAttempts) || spec.maxAttempts < 1)) problems.push(`transactions.maxAttempts must be a whole number ≥ 1 (got ${String(spec.maxAttempts)})`);
  if (spec.backoff) {
    const { initialNs, maxNs } = spec.backoff;
    if (!(initialNs > 0) || !(maxNs >= initialNs)) problems.push(`transactions.backoff needs 0 < initialNs ≤ maxNs (got ${initialNs}, ${maxNs})`);
  }
  return problems;
}
