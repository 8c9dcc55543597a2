import type { AppliedFault } from './executor.js';
import type { PlannedFault } from './schedule.js';

/** A planned fault that was not injected, and why. */
export interface SkippedFault extends PlannedFault {
  readonly reason: string;
}

export interface ScheduleRunDeps {
  /** Wall-clock ms (the schedule's `atMs` count from `startMs`). */
  readonly nowMs: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Injects one fault and heals it (applyFault). */
  readonly apply: (fault: PlannedFault) => Promise<AppliedFault>;
  /** Whether the workload has ended. */
  readonly workloadOver: () => boolean;
  /** Called as each fault is applied or skipped, for progress output. */
  readonly onApplied?: (fault: AppliedFault) => void;
}

export interface ScheduleRun {
  readonly startMs: number;
  /** The workload's planned length and the fault-free stretch kept at its end. */
  readonly durationMs: number;
  readonly quietMs: number;
}

/**
 * Runs the faults one after another at their planned times. A fault only waits for the previous
 * one to heal, so a slow heal (a restarted process that takes seconds to be ready on a loaded
 * machine) pushes the rest late. Faults that would then land in the closing quiet stretch, or
 * after the workload ended, are skipped and reported: a fault with no workload around it has no
 * recovery to measure, and one in the quiet stretch would eat the time the run leaves to recover.
 */
export async function runSchedule(schedule: readonly PlannedFault[], run: ScheduleRun, deps: ScheduleRunDeps): Promise<{ applied: AppliedFault[]; skipped: SkippedFault[] }> {
  const applied: AppliedFault[] = [];
  const skipped: SkippedFault[] = [];
  const lastStartMs = run.startMs + run.durationMs - run.quietMs;
  for (const [i, fault] of schedule.entries()) {
    const wait = run.startMs + fault.atMs - deps.nowMs();
    if (wait > 0) await deps.sleep(wait);
    const reason = deps.workloadOver() ? 'the workload had ended' : deps.nowMs() > lastStartMs ? `the faults before it healed slowly: it would start ${Math.round(deps.nowMs() - run.startMs - fault.atMs)} ms late, inside the closing quiet stretch` : undefined;
    if (reason !== undefined) {
      skipped.push(...schedule.slice(i).map((f) => ({ ...f, reason })));
      break;
    }
    const done = await deps.apply(fault);
    applied.push(done);
    deps.onApplied?.(done);
  }
  return { applied, skipped };
}
