import { create, toBinary } from '@bufbuild/protobuf';
import type { ControlBus, Logger, Subjects } from '@lockfabric/control';
import type { AgentPool, StuckReport } from '@lockfabric/lock-fisslock';
import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, NodeId } from '@lockfabric/ports';
import { FissStuckLockSchema } from '@lockfabric/wire';
import { FISS_SUBJECTS } from './subjects.js';

export interface FissStuckReporterDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  /** Runs the attach loop (live: RealClock; sim: the virtual clock). */
  readonly clock: Clock;
  readonly node: NodeId;
  /** The current run's FissLock agent pool, if any (a new run brings a new pool). */
  readonly pool: () => AgentPool | undefined;
  readonly logger: Logger;
  /** How often the reporter looks for a new run's pool. Default 200 ms. */
  readonly attachEveryMs?: number;
  /** Keep looking after the first pool (a service hosts run after run). Default true; a sim run has one pool. */
  readonly followRuns?: boolean;
}

export interface FissStuckReporter {
  /** Reports published to the coordinator. */
  readonly published: () => number;
  /** Of those, suspicions (a queue that did not move), which the coordinator confirms before it repairs. */
  readonly suspicions: () => number;
  close(): void;
}

/**
 * Sends the agent pool's T_STUCK watchdog reports (FissLock §7) to the coordinator on
 * `ctl.report.fiss.stuck`, with their reason. The coordinator repairs with S1–S3; a `stalled-queue`
 * report is only a suspicion (from one machine a long hold looks the same), which it first confirms
 * against every node's records of the lock (stuck-triage.ts in lock-fisslock). After a report the
 * lock may be flagged again (a later signal, after the repair or the dismissal), so the pool is
 * told to forget it; the coordinator drops repeats while it confirms or repairs.
 */
export function startFissStuckReporter(deps: FissStuckReporterDeps): FissStuckReporter {
  const subject = deps.subjects.protocolReport(FISS_SUBJECTS, 'stuck');
  const attached = new WeakSet<AgentPool>();
  let published = 0;
  let suspicions = 0;
  const onStuck = (pool: AgentPool, report: StuckReport): void => {
    pool.dismissStuck(report.lid);
    const suspicion = report.reason === 'stalled-queue';
    try {
      deps.bus.publish(subject, toBinary(FissStuckLockSchema, create(FissStuckLockSchema, { machine: deps.node, lock: report.lid, reason: report.reason })));
      published++;
      if (suspicion) suspicions++;
      deps.logger.warn(`compute node ${deps.node}: fisslock lock ${report.lid} ${suspicion ? 'may be stuck' : 'is stuck'} (${report.reason}); reported to the coordinator`);
    } catch (error) {
      deps.logger.warn(`compute node ${deps.node}: could not report stuck lock ${report.lid} on ${subject}: ${errorMessage(error)}`);
    }
  };
  /** Whether a pool is attached now. */
  const attach = (): boolean => {
    const pool = deps.pool();
    if (!pool) return false;
    if (attached.has(pool)) return true;
    attached.add(pool);
    pool.onStuckLock = (report) => onStuck(pool, report);
    return true;
  };
  const stop = new AbortController();
  const everyNs = (deps.attachEveryMs ?? 200) * NS_PER_MS;
  void (async () => {
    while (!stop.signal.aborted) {
      if (attach() && deps.followRuns === false) return;
      await deps.clock.sleep(everyNs, stop.signal).catch(() => undefined);
    }
  })();
  return { published: () => published, suspicions: () => suspicions, close: () => stop.abort() };
}
