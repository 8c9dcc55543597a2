import type { NodeId, Span, Trace } from '@lockfabric/ports';
import type { AgentPool, FissPolicy } from '../agent-pool.js';
import { checkRepairPlan } from './invariants.js';
import { machineRecovery } from './machine-recovery.js';
import type { RepairPlan, ServerReport } from './recovery-state.js';
import { ordersFor, repairLockState } from './repair.js';
import type { RepairOptions } from './repair.js';
import { writeRackImages } from './rack-images.js';
import type { DeciderControl, SwitchImage } from './switch-image.js';

/** Time spent in each step, by the caller's `nowNs` (virtual under sim, performance.now in the figure). */
export interface RecoveryStepTimes {
  readonly s1Ns: number;
  readonly s2Ns: number;
  readonly s3Ns: number;
}

export interface RecoveryOutcome {
  readonly epoch: number;
  readonly plan: RepairPlan;
  readonly image: SwitchImage;
  readonly reports: readonly ServerReport[];
  readonly times: RecoveryStepTimes;
  readonly registersWritten: number;
  /** Violations of the post-recovery invariants (empty when the repair is sound). */
  readonly problems: readonly string[];
}

export interface InProcessRecoveryParams {
  readonly epoch: number;
  /** Agent pools of the surviving machines. */
  readonly survivors: readonly AgentPool[];
  readonly failed: readonly NodeId[];
  readonly control: DeciderControl;
  readonly policy: FissPolicy;
  readonly nowNs: () => number;
  /** Waits until packets sent before the pause have arrived or been lost (the fence for in-flight packets). */
  readonly drain?: () => Promise<void>;
  readonly repair?: RepairOptions;
  /** Test-only mutant: the pause leaves unacknowledged ACQUIREs unsettled (see machineRecovery). */
  readonly mutantKeepOldAcquires?: boolean;
  /** `recovery.S1|S2|S3` spans (DESIGN §6), each with the recovery epoch. */
  readonly trace?: Trace;
}

/**
 * S1–S3 driven in one process (sim tests, the figure): pause every survivor, let in-flight packets
 * land, gather reports (S1), repair and apply (S2), write the switch (S3). Lock operations resume
 * when each pool has applied its orders; S3 follows in the same turn, before any packet can move.
 */
export async function recoverInProcess(params: InProcessRecoveryParams): Promise<RecoveryOutcome> {
  const attributes = { 'lockfabric.protocol': 'fisslock', 'lockfabric.recovery.epoch': params.epoch, 'lockfabric.recovery.failed': params.failed.join(',') };
  const root = params.trace?.startSpan('recovery', { attributes });
  const span = (stage: string): Span | undefined => params.trace?.startSpan(`recovery.${stage}`, { attributes, ...(root?.context ? { parent: root.context } : {}) });
  const machines = params.survivors.map((pool) => ({ pool, steps: machineRecovery(pool, { mutantKeepOldAcquires: params.mutantKeepOldAcquires === true }) }));
  const s1 = span('S1');
  for (const m of machines) m.steps.pauseForRecovery();
  await params.drain?.();
  const t0 = params.nowNs();
  const reports = machines.map((m) => m.steps.recoveryReport());
  const t1 = params.nowNs();
  s1?.setAttribute('lockfabric.recovery.agents', reports.reduce((n, r) => n + r.agents.length, 0));
  s1?.end();
  const s2 = span('S2');
  const input = { failed: params.failed, reports };
  const plan = repairLockState(input, params.repair);
  for (const m of machines) m.steps.applyRecovery(ordersFor(plan, m.pool.machine));
  const t2 = params.nowNs();
  s2?.setAttribute('lockfabric.recovery.held', plan.agents.length);
  s2?.end();
  const s3 = span('S3');
  // every rack's decider (one switch unless the run has several racks, FissLock §5.4)
  const { image, written: registersWritten } = await writeRackImages(params.control, plan, params.policy);
  const t3 = params.nowNs();
  s3?.setAttribute('lockfabric.recovery.registers', registersWritten);
  s3?.end();
  const problems = checkRepairPlan(input, plan, image);
  root?.setAttribute('lockfabric.recovery.held', plan.agents.length);
  root?.setAttribute('lockfabric.recovery.problems', problems.length);
  root?.end();
  return { epoch: params.epoch, plan, image, reports, times: { s1Ns: t1 - t0, s2Ns: t2 - t1, s3Ns: t3 - t2 }, registersWritten, problems };
}
