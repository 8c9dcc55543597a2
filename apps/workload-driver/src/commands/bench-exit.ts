import type { BenchReport } from '../report/bench-report.js';

/**
 * bench's exit code over its reports (docs/cli.md): 1 a checker found a violation, 4 a run that
 * measured nothing because no compute node started it (every node refused or failed to prepare),
 * 3 liveness failed, 0 ok. Without the 4, a live run that every node refused (another run still
 * active) exited 0 with 0 acquires.
 */
export function benchExitCode(reports: readonly BenchReport[]): 0 | 1 | 3 | 4 {
  const codes = reports.map((report) => (violated(report) ? 1 : nothingRan(report) ? 4 : report.livenessViolations > 0 ? 3 : 0));
  // A violation outranks a run that failed, which outranks a liveness failure, which outranks success.
  return codes.includes(1) ? 1 : codes.includes(4) ? 4 : codes.includes(3) ? 3 : 0;
}

/** A live run none of whose compute nodes ran the workload. */
export function nothingRan(report: BenchReport): boolean {
  return report.acquires === 0 && (report.notStarted?.length ?? 0) > 0;
}

function violated(report: BenchReport): boolean {
  return (
    report.violations > 0 ||
    (report.warmUp?.violations ?? 0) > 0 ||
    report.transactions?.serializable === false ||
    (report.transactions?.logMismatches.length ?? 0) > 0 ||
    report.application?.check.ok === false ||
    report.transactions?.smallbank?.ok === false
  );
}
