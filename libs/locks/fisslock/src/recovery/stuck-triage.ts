import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, LockId, NodeId } from '@lockfabric/ports';
import type { StuckReason } from '../pool/stuck-watchdog.js';
import { lockLooksStuck } from './lock-repair.js';
import type { ServerReport } from './recovery-state.js';

/** A T_STUCK watchdog report as the repairer hears it (`ctl.report.fiss.stuck` live). */
export interface StuckLockReport {
  /** The machine whose agent pool flagged the lock. */
  readonly machine: NodeId;
  readonly lock: LockId;
  readonly reason: StuckReason;
}

/** One machine's answer to a lock-report call: its S1 report of the lock, or why there is none. */
export type LockReportAnswer = { readonly machine: NodeId; readonly report: ServerReport } | { readonly machine: NodeId; readonly missing: string };

/**
 * What became of a report: `repair` (a repair was started), `dismissed` (the answers show a long
 * hold), `unanswered` (a machine did not answer by the deadline: no repair), or dropped before
 * anything was asked — `busy` (a confirmation or repair of the lock runs), `rate` (over the
 * suspicion rate), `full` (too many in flight).
 */
export type TriageOutcome = 'repair' | 'dismissed' | 'unanswered' | 'busy' | 'rate' | 'full';

export interface StuckTriageLimits {
  /** How long every machine has to answer a confirmation. Default 2000 ms. */
  readonly confirmDeadlineMs?: number;
  /** Suspicions confirmed per second on average (a token bucket); more are dropped. Default 5. */
  readonly suspicionsPerSecond?: number;
  /** Suspicions that may come at once. Default 20. */
  readonly suspicionBurst?: number;
  /** Locks with a confirmation or repair in flight; more reports are dropped. Default 16. */
  readonly maxInFlight?: number;
}

export interface StuckTriageDeps extends StuckTriageLimits {
  readonly clock: Clock;
  /**
   * Every live machine's report of `lock`, taken without pausing anyone. May answer synchronously
   * (in process: the pools' own reports, decided in the same turn); a promise is raced against the deadline.
   */
  readonly ask: (lock: LockId) => readonly LockReportAnswer[] | Promise<readonly LockReportAnswer[]>;
  /** S1–S3 for the lock; the lock counts as in flight until it settles. */
  readonly repair: (report: StuckLockReport) => void | Promise<unknown>;
  /** Told each outcome as it is decided (`detail`: who did not answer, for `unanswered`). */
  readonly onOutcome?: (report: StuckLockReport, outcome: TriageOutcome, detail?: string) => void;
  /** Test-only: a suspicion is repaired without asking anyone (shows the confirmation is what spares a long hold). */
  readonly mutantRepairSuspicionUnconfirmed?: boolean;
}

export interface StuckTriageStats {
  reports: number;
  suspicions: number;
  repairs: number;
  /** Of the repairs, those of suspicions (confirmed, or unasked under the mutant). */
  suspicionRepairs: number;
  dismissed: number;
  unanswered: number;
  droppedBusy: number;
  droppedRate: number;
  droppedFull: number;
}

export interface StuckTriage {
  /** Takes a report; resolves to its outcome (a repair's outcome resolves when the repair starts). */
  handle(report: StuckLockReport): Promise<TriageOutcome>;
  readonly stats: Readonly<StuckTriageStats>;
  /** Locks with a confirmation or repair in flight. */
  inFlight(): number;
  /** Ends every deadline wait (a confirmation in flight then counts as unanswered). */
  close(): void;
}

/**
 * The one rule for the T_STUCK watchdog's reports (FissLock §5.3 repair, spec §12.9), for the
 * coordinator and the in-process repairers alike. A definite report (agent without holders,
 * orphaned holder, bouncing) is repaired. A `stalled-queue` report is a suspicion: from the
 * flagging machine a holder nobody holds and a long hold look the same, and the repair pauses
 * every node, so every live machine is asked for its agents and client records of the lock first
 * and the lock is repaired only if `lockLooksStuck` says so over all the answers; a machine that
 * does not answer by the deadline means no repair (it cannot vouch for its clients). One report per
 * lock is in flight at a time, suspicions are rate-limited, and the number in flight is bounded;
 * whatever is refused is counted.
 */
export function createStuckTriage(deps: StuckTriageDeps): StuckTriage {
  const deadlineNs = (deps.confirmDeadlineMs ?? 2_000) * NS_PER_MS;
  const ratePerNs = (deps.suspicionsPerSecond ?? 5) / 1e9;
  const burst = deps.suspicionBurst ?? 20;
  const maxInFlight = deps.maxInFlight ?? 16;
  const stats: StuckTriageStats = { reports: 0, suspicions: 0, repairs: 0, suspicionRepairs: 0, dismissed: 0, unanswered: 0, droppedBusy: 0, droppedRate: 0, droppedFull: 0 };
  const busy = new Set<LockId>();
  const stop = new AbortController();
  let tokens = burst;
  let tokensAtNs = deps.clock.nowNs();

  const takeToken = (): boolean => {
    const now = deps.clock.nowNs();
    tokens = Math.min(burst, tokens + (now - tokensAtNs) * ratePerNs);
    tokensAtNs = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };

  const settle = (report: StuckLockReport, outcome: TriageOutcome, detail?: string): TriageOutcome => {
    deps.onOutcome?.(report, outcome, detail);
    return outcome;
  };

  const startRepair = (report: StuckLockReport): TriageOutcome => {
    stats.repairs++;
    if (report.reason === 'stalled-queue') stats.suspicionRepairs++;
    const outcome = settle(report, 'repair');
    const release = (): void => void busy.delete(report.lock);
    try {
      const running = deps.repair(report);
      if (running instanceof Promise) running.then(release, release);
      else release();
    } catch (error) {
      release();
      throw error;
    }
    return outcome;
  };

  const decide = (report: StuckLockReport, answers: readonly LockReportAnswer[]): TriageOutcome => {
    const missing = answers.flatMap((a) => ('missing' in a ? [`${a.machine} (${a.missing})`] : []));
    if (missing.length > 0) {
      stats.unanswered++;
      busy.delete(report.lock);
      return settle(report, 'unanswered', missing.join(', '));
    }
    if (!lockLooksStuck(answers.flatMap((a) => ('report' in a ? [a.report] : [])))) {
      stats.dismissed++;
      busy.delete(report.lock);
      return settle(report, 'dismissed');
    }
    return startRepair(report);
  };

  /** The answers, or undefined when the deadline came first. */
  const withDeadline = async (pending: Promise<readonly LockReportAnswer[]>): Promise<readonly LockReportAnswer[] | undefined> => {
    const timer = new AbortController();
    const abort = (): void => timer.abort();
    stop.signal.addEventListener('abort', abort);
    const expired = deps.clock.sleep(deadlineNs, timer.signal).then(
      () => undefined,
      () => undefined,
    );
    try {
      return await Promise.race([pending, expired]);
    } finally {
      timer.abort();
      stop.signal.removeEventListener('abort', abort);
    }
  };

  const confirm = async (report: StuckLockReport, pending: Promise<readonly LockReportAnswer[]>): Promise<TriageOutcome> => {
    let answers: readonly LockReportAnswer[] | undefined;
    try {
      answers = await withDeadline(pending);
    } catch (error) {
      answers = [{ machine: report.machine, missing: errorMessage(error) }];
    }
    if (answers === undefined) {
      stats.unanswered++;
      busy.delete(report.lock);
      return settle(report, 'unanswered', `no complete answer within ${deadlineNs / NS_PER_MS} ms`);
    }
    return decide(report, answers);
  };

  const handle = (report: StuckLockReport): Promise<TriageOutcome> => {
    stats.reports++;
    const suspicion = report.reason === 'stalled-queue';
    if (suspicion) stats.suspicions++;
    if (busy.has(report.lock)) {
      stats.droppedBusy++;
      return Promise.resolve(settle(report, 'busy'));
    }
    if (busy.size >= maxInFlight) {
      stats.droppedFull++;
      return Promise.resolve(settle(report, 'full'));
    }
    if (suspicion && !takeToken()) {
      stats.droppedRate++;
      return Promise.resolve(settle(report, 'rate'));
    }
    busy.add(report.lock);
    if (!suspicion || deps.mutantRepairSuspicionUnconfirmed === true) return Promise.resolve(startRepair(report));
    let answers: readonly LockReportAnswer[] | Promise<readonly LockReportAnswer[]>;
    try {
      answers = deps.ask(report.lock);
    } catch (error) {
      answers = [{ machine: report.machine, missing: errorMessage(error) }];
    }
    // answered in the same turn (in process): decided in it, so the repair starts where it did before
    return answers instanceof Promise ? confirm(report, answers) : Promise.resolve(decide(report, answers));
  };

  return { handle, stats, inFlight: () => busy.size, close: () => stop.abort() };
}
