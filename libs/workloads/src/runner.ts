import { clientKey, NS_PER_MS, TableLostError, errorMessage } from '@lockfabric/ports';
import type { AcquireOptions, ClientPorts, Clock, Grant, LockClient, Random } from '@lockfabric/ports';
import { packFlags } from '@lockfabric/check';
import type { HistoryOp, HistoryPhase, HistoryRecorder } from '@lockfabric/check';
import type { LockMode } from '@lockfabric/ports';
import { createKeyChooser, createModeChooser } from './key-chooser.js';
import type { KeyChooser, ModeChooser } from './key-chooser.js';
import type { RunStats } from './results.js';
import type { WorkloadSpec } from './spec.js';

export interface ClientLoopOptions<G extends Grant = Grant> {
  readonly client: LockClient<G>;
  /** Only `self`, `clock` and `random` are used, so the loop runs unchanged on every substrate. */
  readonly ports: Pick<ClientPorts, 'self' | 'clock' | 'random' | 'tables'>;
  readonly spec: WorkloadSpec;
  readonly recorder: HistoryRecorder;
  /** May be shared by the clients of one process. */
  readonly stats: RunStats;
  /** Polled before each operation. */
  readonly shouldStop: () => boolean;
  /** Acquire attempts this client makes at most (see `opsBudgetFor`); unbounded when absent. */
  readonly opsBudget?: number;
  /** Passed to acquires and think time; aborting ends the loop after the current hold is released. */
  readonly signal?: AbortSignal;
  /** Overrides the choosers built from the spec (directed scenarios). */
  readonly keys?: KeyChooser;
  readonly modes?: ModeChooser;
  /** Backoff after acquires that failed for want of the fabric (default FABRIC_BACKOFF). */
  readonly fabricBackoff?: FabricBackoffPolicy;
  /** Work done with the lock held, before the `criticalSectionNs` sleep (the data verbs of --cs-verbs). */
  readonly criticalSection?: (grant: G) => Promise<void>;
}

export interface FabricBackoffPolicy {
  readonly initialNs: number;
  readonly maxNs: number;
}

/** 2 ms doubling to 200 ms: at most 8 failures to reach the cap, then at most 10 per second. */
export const FABRIC_BACKOFF: FabricBackoffPolicy = { initialNs: 2 * NS_PER_MS, maxNs: 200 * NS_PER_MS };
/** How long a failed release waits for its memory node to answer again before it is classified. */
const TABLE_SETTLE_MS = 5_000;
/** Failure codes that mean the fabric (a memory node) is unavailable, not that the lock is busy. */
const FABRIC_UNAVAILABLE = new Set(['FABRIC_ACCESS', 'TABLE_LOST']);

/**
 * Bounded exponential backoff with half jitter: the n-th consecutive delay lies in
 * [bound/2, bound), bound = min(max, initial·2^(n-1)). The floor is what bounds the failure rate
 * while a memory node is down; the jitter comes from the client's own Random (deterministic on sim).
 */
export class FabricBackoff {
  private boundNs: number;

  constructor(
    private readonly random: Random,
    private readonly policy: FabricBackoffPolicy = FABRIC_BACKOFF,
  ) {
    this.boundNs = policy.initialNs;
  }

  nextDelayNs(): number {
    const bound = this.boundNs;
    this.boundNs = Math.min(this.policy.maxNs, this.boundNs * 2);
    return bound / 2 + Math.floor((this.random.next() * bound) / 2);
  }

  reset(): void {
    this.boundNs = this.policy.initialNs;
  }
}

export interface ClientLoopResult {
  /** Acquire attempts made. */
  readonly operations: number;
  readonly acquired: number;
  readonly acquireFailures: number;
  readonly releaseFailures: number;
}

/**
 * One client's workload loop: pick a lock and a mode, acquire, hold for the critical section,
 * release, think, until `shouldStop()` or the budget is spent. Every step is recorded in the
 * history with times from `ports.clock`; latencies go into `stats`. A failed acquire is recorded
 * with the error's name and counts against the budget; the loop goes on.
 */
export async function runClientLoop<G extends Grant>(options: ClientLoopOptions<G>): Promise<ClientLoopResult> {
  const { client, ports, spec, recorder, stats, shouldStop, signal } = options;
  const clock = ports.clock;
  const self = clientKey(ports.self);
  const keys = options.keys ?? createKeyChooser(spec, ports.random, clock);
  const modes = options.modes ?? createModeChooser(spec.readRatio, ports.random);
  const budget = options.opsBudget ?? Number.POSITIVE_INFINITY;
  const acquireOptions: AcquireOptions = { ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}), ...(signal ? { signal } : {}) };
  let operations = 0;
  let acquired = 0;
  let acquireFailures = 0;
  let releaseFailures = 0;
  const backoff = new FabricBackoff(ports.random, options.fabricBackoff);
  // The client's index in the recorder, taken at its first event (so clients keep the order in
  // which they first recorded): one name lookup per loop instead of one per event.
  let me = -1;
  const record = (op: HistoryOp, phase: HistoryPhase, lock: number, mode: LockMode, timeNs: number, error?: string): void => {
    if (me < 0) me = recorder.clientId(self);
    recorder.record(me, lock, FLAGS[op][phase][mode], timeNs, error);
  };

  while (operations < budget && !shouldStop() && !signal?.aborted) {
    const lock = keys.next();
    const mode = modes.next();
    operations++;
    const acquireStartNs = clock.nowNs();
    record('acquire', 'invoke', lock, mode, acquireStartNs);
    let grant: G;
    // Holding nothing: this acquire's verbs go to the memory nodes' tables as they are now.
    ports.tables?.follow();
    try {
      grant = await client.acquire(lock, mode, acquireOptions);
    } catch (error) {
      record('acquire', 'fail', lock, mode, clock.nowNs(), errorName(error));
      stats.recordFailure('acquire', errorCode(error));
      acquireFailures++;
      // A memory node that is down fails acquires at once: back off instead of spinning on it.
      const pauseNs = FABRIC_UNAVAILABLE.has(errorCode(error)) ? Math.max(spec.thinkNs, backoff.nextDelayNs()) : spec.thinkNs;
      if (!(await think(clock, pauseNs, signal))) break;
      continue;
    }
    backoff.reset();
    const grantedNs = clock.nowNs();
    record('acquire', 'ok', lock, mode, grantedNs);
    stats.recordAcquire(grantedNs - acquireStartNs);
    acquired++;

    // The hold is not abortable: whatever happens, the lock is released before the loop ends.
    if (options.criticalSection) await options.criticalSection(grant);
    if (spec.criticalSectionNs > 0) await clock.sleep(spec.criticalSectionNs);

    const releaseStartNs = clock.nowNs();
    record('release', 'invoke', grant.lock, grant.mode, releaseStartNs);
    try {
      await client.release(grant);
      const releasedNs = clock.nowNs();
      record('release', 'ok', grant.lock, grant.mode, releasedNs);
      stats.recordRelease(releasedNs - releaseStartNs);
    } catch (caught) {
      let error = caught;
      // The table of this grant may be gone (the memory node restarted): then the hold ended with it.
      if (ports.tables && errorCode(caught) === 'FABRIC_ACCESS' && (await ports.tables.settle(TABLE_SETTLE_MS))) {
        error = new TableLostError(grant.lock, errorMessage(caught), { cause: caught });
      }
      record('release', 'fail', grant.lock, grant.mode, clock.nowNs(), errorName(error));
      stats.recordFailure('release', errorCode(error));
      releaseFailures++;
    }
    if (!(await think(clock, spec.thinkNs, signal))) break;
  }
  return { operations, acquired, acquireFailures, releaseFailures };
}

const flagsOf = (op: HistoryOp, phase: HistoryPhase) => ({ shared: packFlags('shared', op, phase), exclusive: packFlags('exclusive', op, phase) });
/** The history flag byte of every (op, phase, mode), packed once. */
const FLAGS = {
  acquire: { invoke: flagsOf('acquire', 'invoke'), ok: flagsOf('acquire', 'ok'), fail: flagsOf('acquire', 'fail') },
  release: { invoke: flagsOf('release', 'invoke'), ok: flagsOf('release', 'ok'), fail: flagsOf('release', 'fail') },
} as const;

/** Sleeps the think time; false when aborted. */
async function think(clock: Clock, thinkNs: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return false;
  if (thinkNs <= 0) return true;
  try {
    await clock.sleep(thinkNs, signal);
    return true;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}

/** The error's class name (`LockTimeoutError`), as recorded in histories. */
export function errorName(error: unknown): string {
  if (error instanceof Error) return error.name || 'Error';
  return typeof error === 'string' ? error : 'UnknownError';
}

/** The error's stable code (`LOCK_TIMEOUT`) when it has one, else its name. */
export function errorCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.length > 0 ? code : errorName(error);
}

/** A `shouldStop` for `durationMs` of the given clock, counted from now. */
export function stopAfter(clock: Clock, durationMs: number | undefined): () => boolean {
  if (durationMs === undefined) return () => false;
  const deadlineNs = clock.nowNs() + durationMs * NS_PER_MS;
  return () => clock.nowNs() >= deadlineNs;
}
