import type { NodeId, Trace } from '@lockfabric/ports';
import type { AgentPool, FissPolicy } from '../agent-pool.js';
import { runFissRecovery } from './driver.js';
import type { FissParticipant } from './driver.js';
import { machineRecovery } from './machine-recovery.js';
import type { MachineRecovery } from './machine-recovery.js';
import type { RepairPlan, ServerReport } from './recovery-state.js';
import type { RepairOptions } from './repair.js';
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
  /** How each survivor takes part in S1 and S2 (default machineRecovery; tests pass older rules as variants of it). */
  readonly machineSteps?: (pool: AgentPool) => MachineRecovery;
  /** `recovery.S1|S2|S3` spans (DESIGN §6), each with the recovery epoch. */
  readonly trace?: Trace;
}

/**
 * A surviving pool as a participant of the one S1–S3 driver, called directly instead of over the
 * control bus. It is paused already (see recoverInProcess), so the driver's pause call is a no-op.
 */
function inProcessParticipant(pool: AgentPool, steps: MachineRecovery): FissParticipant {
  return {
    machine: pool.machine,
    pause: async () => undefined,
    report: async () => steps.recoveryReport(),
    apply: async (_epoch, orders) => steps.applyRecovery(orders),
  };
}

/**
 * S1–S3 in one process (sim tests, the FissLock Fig. 17 timing): the coordinator's driver
 * (runFissRecovery) over the survivors' pools called directly. Pauses every survivor, lets
 * in-flight packets land (`drain`), gathers reports (S1), repairs and applies (S2), writes the
 * switch (S3); a pool's lock operations resume when it applied its orders. S1's time is taken from
 * the driver's step, which starts after the pause and includes the drain.
 */
export async function recoverInProcess(params: InProcessRecoveryParams): Promise<RecoveryOutcome> {
  const stepsOf = params.machineSteps ?? machineRecovery;
  const machines = params.survivors.map((pool) => ({ pool, steps: stepsOf(pool) }));
  // Pause and start the drain in the caller's turn, before the driver's first await: a sim test
  // that steps the simulator right after this call must find the drain's timer already set.
  for (const m of machines) m.steps.pauseForRecovery();
  const drained = params.drain?.();
  const participants = machines.map((m) => inProcessParticipant(m.pool, m.steps));
  const run = await runFissRecovery({
    epoch: BigInt(params.epoch),
    participants,
    failed: params.failed,
    control: params.control,
    policy: params.policy,
    nowNs: params.nowNs,
    ...(drained ? { settle: () => drained } : {}),
    ...(params.repair ? { repair: params.repair } : {}),
    ...(params.trace ? { trace: params.trace } : {}),
  });
  const took = (stage: string) => {
    const step = run.steps.find((s) => s.stage === stage);
    return step ? step.endNs - step.startNs : 0;
  };
  return {
    epoch: params.epoch,
    plan: run.plan,
    image: run.image,
    reports: run.reports,
    times: { s1Ns: took('S1'), s2Ns: took('S2'), s3Ns: took('S3') },
    registersWritten: run.registersWritten,
    problems: run.problems,
  };
}
