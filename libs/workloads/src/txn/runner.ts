import { ConfigError, clientKey } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Clock, Grant, LockClient, Random } from '@lockfabric/ports';
import type { HistoryRecorder } from '@lockfabric/check';
import type { RunStats } from '../results.js';
import { FabricBackoff, errorCode, errorName, stopAfter } from '../runner.js';
import type { ClientLoopResult } from '../runner.js';
import type { RunClientsOptions, RunClientsResult } from '../run-clients.js';
import { opsBudgetFor } from '../spec.js';
import type { WorkloadSpec } from '../spec.js';
import type { VerbPhase } from '../verb-accounting.js';
import { txnWorkloadOf } from './generator.js';
import type { TxnWorkload } from './generator.js';
import type { TxnHold, TxnLogEntry } from './log.js';
import { TXN_BACKOFF, TXN_MAX_ATTEMPTS, validateTxnRunSpec } from './types.js';
import type { TxnBackoffPolicy, TxnRunSpec, TxnTemplate } from './types.js';

/** Failure codes that mean a memory node is unavailable: back off as the single-lock loop does. */
const FABRIC_UNAVAILABLE = new Set(['FABRIC_ACCESS', 'TABLE_LOST']);

export interface TxnLoopOptions<G extends Grant = Grant> {
  readonly client: LockClient<G>;
  readonly ports: Pick<ClientPorts, 'self' | 'clock' | 'random' | 'tables'>;
  readonly spec: WorkloadSpec;
  readonly txn: TxnRunSpec;
  readonly workload: TxnWorkload;
  readonly recorder: HistoryRecorder;
  readonly stats: RunStats;
  readonly shouldStop: () => boolean;
  /** Transactions this client starts at most. */
  readonly txnBudget?: number;
  readonly signal?: AbortSignal;
  /** Receives every committed transaction as it commits (the direct transaction log). */
  readonly onCommit?: (entry: TxnLogEntry) => void;
  /** The transaction's data verbs, run with all its locks held (SmallBank's Redis reads and writes). */
  readonly data?: TxnData;
}

/**
 * What a transaction does with its data while it holds every lock. `execute` is the execution
 * time (think); the store decides where it falls (SmallBank: between its reads and its writes).
 * A store failure is not an abort (writes may have happened): it ends the run with its error.
 */
export interface TxnData {
  run(template: TxnTemplate, execute: () => Promise<void>): Promise<void>;
}

export interface TxnLoopResult extends ClientLoopResult {
  readonly transactions: number;
  readonly committed: number;
  readonly aborts: number;
  /** Transactions given up after maxAttempts aborted attempts. */
  readonly gaveUp: number;
}

/** Randomized exponential backoff: the n-th consecutive delay lies in [b/2, b), b = min(max, initial·2^(n-1)). */
class RetryBackoff {
  private boundNs: number;
  constructor(
    private readonly random: Random,
    private readonly policy: TxnBackoffPolicy,
  ) {
    this.boundNs = policy.initialNs;
  }
  next(): number {
    const bound = this.boundNs;
    this.boundNs = Math.min(this.policy.maxNs, bound * 2);
    return bound / 2 + Math.floor((this.random.next() * bound) / 2);
  }
  reset(): void {
    this.boundNs = this.policy.initialNs;
  }
}

/**
 * One client's transaction loop under strict two-phase locking: take the transaction's locks in
 * ascending id order, hold them for the execution time, commit, release them all (in reverse).
 * A failed acquire (timeout, abort) rolls back — releases what is held, in reverse — and the same
 * transaction is retried after randomized exponential backoff. Every lock step goes into the
 * history like the single-lock loop's, so the exclusion and liveness checkers apply unchanged.
 */
export async function runTxnLoop<G extends Grant>(options: TxnLoopOptions<G>): Promise<TxnLoopResult> {
  const { client, ports, spec, txn, workload, recorder, stats, shouldStop, signal } = options;
  const clock = ports.clock;
  const self = clientKey(ports.self);
  const stream = workload.stream(self);
  const budget = options.txnBudget ?? Number.POSITIVE_INFINITY;
  const acquireOptions: AcquireOptions = { ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}), ...(signal ? { signal } : {}) };
  const retry = new RetryBackoff(ports.random, txn.backoff ?? TXN_BACKOFF);
  const fabric = new FabricBackoff(ports.random);
  let transactions = 0;
  let committed = 0;
  let aborts = 0;
  let gaveUp = 0;
  let operations = 0;
  let acquired = 0;
  let acquireFailures = 0;
  let releaseFailures = 0;

  /** Releases one grant; returns the release's error, if it failed. */
  const release = async (grant: G, holds: TxnHold[] | undefined, acquiredNs: number): Promise<unknown> => {
    const startNs = clock.nowNs();
    holds?.push({ lock: grant.lock, mode: grant.mode, acquiredNs, releasedNs: startNs });
    recorder.invoke(self, 'release', grant.lock, grant.mode, startNs);
    try {
      await client.release(grant);
      const doneNs = clock.nowNs();
      recorder.ok(self, 'release', grant.lock, grant.mode, doneNs);
      stats.recordRelease(doneNs - startNs);
      return undefined;
    } catch (error) {
      recorder.fail(self, 'release', grant.lock, grant.mode, clock.nowNs(), errorName(error));
      stats.recordFailure('release', errorCode(error));
      releaseFailures++;
      return error;
    }
  };

  outer: while (transactions < budget && !shouldStop() && !signal?.aborted) {
    const template = stream.next();
    const seq = transactions++;
    const startNs = clock.nowNs();
    const abortNames: string[] = [];
    retry.reset();
    for (let attempt = 1; ; attempt++) {
      ports.tables?.follow();
      const held: { grant: G; acquiredNs: number }[] = [];
      const holds: TxnHold[] = [];
      let failure: unknown;
      /** Set when every lock was released at commit but a lease had run out: nothing left to roll back. */
      let voidCommit = false;
      for (let i = 0; i < template.locks.length; i++) {
        const { lock, mode } = template.locks[i]!;
        if (txn.mutantEarlyRelease && i === 1) {
          // Mutant: gives back the first lock before taking the second (not two-phase any more).
          const first = held.shift()!;
          await release(first.grant, holds, first.acquiredNs);
        }
        operations++;
        const invokedNs = clock.nowNs();
        recorder.invoke(self, 'acquire', lock, mode, invokedNs);
        try {
          const grant = await client.acquire(lock, mode, template.slots ? withSlots(acquireOptions, template.slots) : acquireOptions);
          const grantedNs = clock.nowNs();
          recorder.ok(self, 'acquire', lock, mode, grantedNs);
          stats.recordAcquire(grantedNs - invokedNs);
          acquired++;
          held.push({ grant, acquiredNs: grantedNs });
        } catch (error) {
          recorder.fail(self, 'acquire', lock, mode, clock.nowNs(), errorName(error));
          stats.recordFailure('acquire', errorCode(error));
          acquireFailures++;
          failure = error;
          break;
        }
      }
      if (failure === undefined) {
        fabric.reset();
        const executeNs = template.executeNs ?? txn.executeNs;
        const execute = async () => {
          if (executeNs > 0) await clock.sleep(executeNs);
        };
        if (options.data) await options.data.run(template, execute);
        else await execute();
        // Commit point: the transaction's effects are decided; now its locks go, last taken first.
        let expired: unknown;
        voidCommit = true;
        for (let i = held.length - 1; i >= 0; i--) {
          const error = await release(held[i]!.grant, holds, held[i]!.acquiredNs);
          if (errorCode(error) === 'LEASE_EXPIRED' && !txn.mutantCommitExpiredLease) expired ??= error;
        }
        if (expired === undefined) voidCommit = false;
        else {
          // A lease ran out while the transaction held it (DSLR §4.7: others may have skipped it),
          // so the commit is void: an abort like a failed acquire, and the same rule
          // `replayTxnLog` applies to the history. Only lease protocols (DSLR) say so.
          failure = expired;
        }
      }
      if (failure === undefined) {
        committed++;
        const byLock = new Map(holds.map((h) => [h.lock, h]));
        options.onCommit?.({
          id: `${self}#${seq}`,
          client: self,
          seq,
          type: template.type,
          attempts: attempt,
          aborts: abortNames,
          startNs,
          endNs: clock.nowNs(),
          holds: template.locks.map((l) => byLock.get(l.lock)!),
        });
        break;
      }
      // Rollback: nothing was written yet; give back what is held, in reverse (a void commit gave
      // everything back already).
      if (!voidCommit) for (let i = held.length - 1; i >= 0; i--) await release(held[i]!.grant, undefined, held[i]!.acquiredNs);
      aborts++;
      abortNames.push(errorName(failure));
      if (signal?.aborted || shouldStop()) break outer;
      if (attempt >= (txn.maxAttempts ?? TXN_MAX_ATTEMPTS)) {
        gaveUp++;
        break;
      }
      const code = errorCode(failure);
      const pauseNs = FABRIC_UNAVAILABLE.has(code) ? Math.max(retry.next(), fabric.nextDelayNs()) : retry.next();
      if (!(await pause(clock, pauseNs, signal))) break outer;
    }
    if (!(await pause(clock, spec.thinkNs, signal))) break;
  }
  return { operations, acquired, acquireFailures, releaseFailures, transactions, committed, aborts, gaveUp };
}

/** Acquire options asking for `slots` lease slots (read by DSLR, ignored by protocols without leases). */
function withSlots(options: AcquireOptions, slots: number): AcquireOptions {
  const withSlotCount: AcquireOptions & { readonly slots: number } = { ...options, slots };
  return withSlotCount;
}

async function pause(clock: Clock, ns: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return false;
  if (ns <= 0) return true;
  try {
    await clock.sleep(ns, signal);
    return true;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}

/**
 * `runClients` for a spec with `transactions`: every client runs the transaction loop.
 * `spec.operations` counts transactions. Crash and pause injection are single-lock-loop features.
 */
export async function runTxnClients(options: RunClientsOptions): Promise<RunClientsResult> {
  const { protocol, spec, clock } = options;
  const txn = spec.transactions;
  if (!txn) throw new ConfigError(['runTxnClients needs spec.transactions']);
  const problems = validateTxnRunSpec(txn, spec.locks);
  if (options.crashProbability) problems.push('crash injection is not supported for transactional workloads');
  if (options.pauses && options.pauses.length > 0) problems.push('pause injection is not supported for transactional workloads');
  const workload = txnWorkloadOf(txn);
  if (workload.lockCount > spec.locks) problems.push(`the ${workload.name} workload uses ${workload.lockCount} locks, the run has ${spec.locks}`);
  if (problems.length > 0) throw new ConfigError(problems);
  const startNs = clock.nowNs();
  const shouldStop = stopAfter(clock, spec.durationMs);
  const loops = options.ports.map((original, index) => {
    let ports = original;
    let phase: VerbPhase | undefined;
    if (options.accounting) ports = { ...ports, verbs: options.accounting.wrapVerbs(ports.verbs, () => phase) };
    let client: LockClient<Grant> = protocol.createClient(ports, options.protocolOptions);
    if (options.accounting) client = options.accounting.wrapClient(client, (next) => (phase = next));
    return runTxnLoop({
      client,
      ports,
      spec,
      txn,
      workload,
      recorder: options.recorder,
      stats: options.stats,
      shouldStop,
      txnBudget: opsBudgetFor(spec, index),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onTxnCommit ? { onCommit: options.onTxnCommit } : {}),
      ...(options.txnData ? { data: options.txnData } : {}),
    });
  });
  const settled = await Promise.all(loops);
  return { startNs, endNs: clock.nowNs(), loops: settled, crashed: new Map() };
}
