import type { LockMode } from '@lockfabric/ports';

/** One completed acquire as a history records it (structurally the checker library's AcquireRecord). */
export interface AcquireTimes {
  readonly client: string;
  readonly lock: number;
  readonly mode: LockMode;
  readonly invokeNs: number;
  /** Grant time, or the time the acquire gave up. */
  readonly endNs: number;
  readonly granted: boolean;
}

export interface TaskFairOptions {
  /** Tolerance on both comparisons: the time between a decision and the client recording it. */
  readonly slackNs?: number;
  /** Overtakes one acquire may suffer; 0 is strict task-fairness. */
  readonly maxBypass?: number;
  readonly maxViolations?: number;
}

export interface TaskFairViolation {
  readonly waiter: AcquireTimes;
  readonly overtakes: number;
  readonly firstOvertaker: AcquireTimes;
}

export interface TaskFairReport {
  readonly ok: boolean;
  readonly violationCount: number;
  readonly violations: readonly TaskFairViolation[];
  readonly maxOvertakesObserved: number;
  readonly totalOvertakes: number;
  readonly acquiresConsidered: number;
}

/**
 * DecLock's ordering promise (spec I6): task-fairness. B overtakes A when A clearly asked first,
 * B was clearly granted while A still waited, and at least one of them is a writer — a reader
 * granted before an earlier reader is not an overtake, since both may hold together (a reader
 * that arrives just after a writer's release joins the readers that writer is notifying).
 */
export function checkTaskFairness(acquires: Iterable<AcquireTimes>, options: TaskFairOptions = {}): TaskFairReport {
  const slackNs = options.slackNs ?? 0;
  const maxBypass = options.maxBypass ?? 0;
  const maxViolations = options.maxViolations ?? 100;
  const byLock = new Map<number, AcquireTimes[]>();
  let considered = 0;
  for (const acquire of acquires) {
    considered++;
    const list = byLock.get(acquire.lock);
    if (list) list.push(acquire);
    else byLock.set(acquire.lock, [acquire]);
  }
  const violations: TaskFairViolation[] = [];
  let violationCount = 0;
  let maxOvertakesObserved = 0;
  let totalOvertakes = 0;
  for (const list of byLock.values()) {
    const grants = list.filter((a) => a.granted).sort((x, y) => x.invokeNs - y.invokeNs);
    for (const waiter of list) {
      let overtakes = 0;
      let first: AcquireTimes | undefined;
      for (const other of grants) {
        if (other.invokeNs <= waiter.invokeNs + slackNs) continue;
        if (other.endNs + slackNs >= waiter.endNs) continue;
        if (waiter.mode === 'shared' && other.mode === 'shared') continue;
        overtakes++;
        if (!first || other.endNs < first.endNs) first = other;
      }
      totalOvertakes += overtakes;
      maxOvertakesObserved = Math.max(maxOvertakesObserved, overtakes);
      if (overtakes > maxBypass && first) {
        violationCount++;
        if (violations.length < maxViolations) violations.push({ waiter, overtakes, firstOvertaker: first });
      }
    }
  }
  return { ok: violationCount === 0, violationCount, violations, maxOvertakesObserved, totalOvertakes, acquiresConsidered: considered };
}

export function describeTaskFairViolation(violation: TaskFairViolation): string {
  const { waiter: w, firstOvertaker: o } = violation;
  return `lock ${w.lock}: ${w.client} (${w.mode}, asked ${w.invokeNs}, done ${w.endNs}) overtaken ${violation.overtakes}× — first by ${o.client} (${o.mode}, asked ${o.invokeNs}, granted ${o.endNs})`;
}
