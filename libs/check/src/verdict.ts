import { checkExclusion, describeExclusionViolation } from './exclusion.js';
import type { ExclusionOptions, ExclusionReport, ExclusionViolation } from './exclusion.js';
import type { FailedClients } from './failed-clients.js';
import { checkFifo, describeFifoViolation } from './fifo.js';
import type { FifoOptions, FifoReport } from './fifo.js';
import { HistoryColumns } from './columns.js';
import type { HistoryInput } from './columns.js';
import { checkLiveness, describeLivenessViolation } from './liveness.js';
import type { LivenessReport } from './liveness.js';

export interface CheckOptions {
  readonly failedClients?: FailedClients;
  readonly holdEndForFailedClient?: ExclusionOptions['holdEndForFailedClient'];
  readonly maxWaitNs?: number;
  /** FIFO / bounded-bypass check, for protocols that promise it; off unless given. */
  readonly fifo?: FifoOptions | boolean;
  /** Violations listed per checker (all are counted); default 100. */
  readonly maxViolations?: number;
}

export interface HistoryStats {
  readonly events: number;
  readonly clients: number;
  readonly locks: number;
  readonly firstNs: number;
  readonly lastNs: number;
  readonly holds: number;
  readonly unreleasedHolds: number;
}

export interface Verdict {
  /** No exclusion violation, no liveness violation or protocol error, and FIFO held if it was checked. */
  readonly ok: boolean;
  /** Exclusion violations (safety), the most important finding. */
  readonly violations: readonly ExclusionViolation[];
  readonly exclusion: ExclusionReport;
  readonly liveness: LivenessReport;
  readonly fifo?: FifoReport;
  readonly stats: HistoryStats;
}

/** Runs every checker over one (merged) history. */
export function checkHistory(history: HistoryInput, options: CheckOptions = {}): Verdict {
  const ordered = HistoryColumns.from(history);
  const { failedClients, holdEndForFailedClient, maxWaitNs, maxViolations } = options;
  const exclusion = checkExclusion(ordered, { failedClients, holdEndForFailedClient, maxViolations });
  const liveness = checkLiveness(ordered, { failedClients, maxWaitNs, maxViolations });
  const fifoOptions = options.fifo === true ? {} : options.fifo === false ? undefined : options.fifo;
  const fifo = fifoOptions ? checkFifo(ordered, { maxViolations, ...fifoOptions }) : undefined;

  const locks = new Set<number>();
  for (let i = 0; i < ordered.length; i++) locks.add(ordered.locks[i] as number);
  const stats: HistoryStats = {
    events: ordered.length,
    clients: ordered.clientNames.length,
    locks: locks.size,
    firstNs: ordered.times[0] ?? 0,
    lastNs: ordered.times[ordered.length - 1] ?? 0,
    holds: exclusion.holds,
    unreleasedHolds: exclusion.unreleasedHolds,
  };
  const ok = exclusion.ok && liveness.ok && (fifo?.ok ?? true);
  const verdict: Verdict = { ok, violations: exclusion.violations, exclusion, liveness, stats };
  return fifo ? { ...verdict, fifo } : verdict;
}

/** A few lines for people: the outcome, the counts, and the first violations of each kind. */
export function summarizeVerdict(verdict: Verdict, maxLines = 5): string {
  const { stats, exclusion, liveness, fifo } = verdict;
  const lines = [
    `${verdict.ok ? 'PASS' : 'FAIL'}: ${stats.events} events, ${stats.clients} clients, ${stats.locks} locks, ${stats.holds} holds over ${stats.lastNs - stats.firstNs} ns`,
    `  exclusion: ${exclusion.ok ? 'ok' : `${exclusion.violationCount} violations`}`,
    `  liveness: ${liveness.ok ? 'ok' : `${liveness.violationCount} violations (${liveness.protocolErrorCount} protocol errors)`}; ` +
      `acquires ${liveness.counts.acquiresOk} ok, ${liveness.counts.acquiresFailed} failed; max wait ${liveness.counts.maxAcquireWaitNs} ns`,
  ];
  if (fifo) {
    lines.push(
      `  fifo (bypass ≤ ${fifo.maxBypass}, slack ${fifo.slackNs} ns): ${fifo.ok ? 'ok' : `${fifo.violationCount} violations`}; max overtakes ${fifo.maxOvertakesObserved}`,
    );
  }
  for (const v of exclusion.violations.slice(0, maxLines)) lines.push(`    ${describeExclusionViolation(v)}`);
  for (const v of liveness.violations.slice(0, maxLines)) lines.push(`    ${describeLivenessViolation(v)}`);
  for (const v of fifo?.violations.slice(0, maxLines) ?? []) lines.push(`    ${describeFifoViolation(v)}`);
  return lines.join('\n');
}
