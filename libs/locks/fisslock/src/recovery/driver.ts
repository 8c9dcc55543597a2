import type { FissPolicy } from '../agent-pool.js';
import { checkRepairPlan } from './invariants.js';
import { writeRackImages } from './rack-images.js';
import type { MachineOrders, RepairPlan, ServerReport } from './recovery-state.js';
import { ordersFor, repairLockState } from './repair.js';
import type { RepairOptions } from './repair.js';
import type { DeciderControl, SwitchImage } from './switch-image.js';
import { LockFabricError, errorMessage } from '@lockfabric/ports';
import type { LockId, NodeId, Span, SpanAttributeValue, Trace } from '@lockfabric/ports';

/** One surviving compute node as the coordinator drives it (NATS request/reply live, direct calls in-process). */
export interface FissParticipant {
  readonly machine: NodeId;
  /** S1: stop lock operations and drop the retransmission buffer; `false` means it runs no FissLock and takes no part. */
  pause(epoch: bigint): Promise<void | boolean>;
  /** S1: agent and client states, taken after the pause has settled. */
  report(epoch: bigint): Promise<ServerReport>;
  /** S2: install / delete agents, wake granted tasks, fail aborted requests; lock operations resume (unless `resume` exists). */
  apply(epoch: bigint, orders: MachineOrders): Promise<void>;
  /**
   * After S3 (spec: "Servers then resume"): a participant whose packets could reach the switch
   * before S3 rewrote it (live: NATS) holds them from `apply` until this call.
   */
  resume?(epoch: bigint): Promise<void>;
  /**
   * Outside any recovery: the machine's agents and client records of one lock, read without pausing
   * anything (confirms a stalled-queue suspicion); undefined when it runs no FissLock.
   */
  lockReport?(epoch: bigint, lock: LockId): Promise<ServerReport | undefined>;
}

export type FissStage = 'S1' | 'S2' | 'S3';

/** When one step ran, by the coordinator's clock. */
export interface FissStepTiming {
  readonly stage: FissStage;
  readonly startNs: number;
  readonly endNs: number;
  readonly detail: string;
}

export interface FissRecoveryRun {
  readonly epoch: bigint;
  /** Machines that took part (a participant whose pause answered `false` runs no FissLock). */
  readonly machines: readonly NodeId[];
  readonly steps: readonly FissStepTiming[];
  readonly plan: RepairPlan;
  /** S1's reports and S3's image, for callers that check them (sim tests, the Fig. 17 timing). */
  readonly reports: readonly ServerReport[];
  readonly image: SwitchImage;
  readonly registersWritten: number;
  readonly problems: readonly string[];
}

export interface FissRecoveryParams {
  readonly epoch: bigint;
  readonly participants: readonly FissParticipant[];
  readonly failed: readonly NodeId[];
  readonly control: DeciderControl;
  /** The pools' grant policy; a function when it is learnt from the participants during S1. */
  readonly policy: FissPolicy | (() => FissPolicy);
  readonly nowNs: () => number;
  /** Waited between the pause and the reports, so packets sent before the pause land or are lost. */
  readonly settle?: () => Promise<void>;
  /** Where the `recovery` span and its `recovery.S1|S2|S3` children go (DESIGN §6). */
  readonly trace?: Trace;
  /** Called after S3 wrote the switch, before the participants resume (the coordinator opens the switch's admission here). */
  readonly onSwitchWritten?: () => void | Promise<void>;
  /** The member whose failure or restart this recovery answers (`switch/rack0`, `compute/2`), for the span. */
  readonly member?: string;
  /** S2's repair options (test-only mutants of the repair). */
  readonly repair?: RepairOptions;
}

/**
 * Some participants failed a step's call (no answer in time, a refusal, a reply that does not
 * decode). Every call of the step is waited for, so `machines` names all of them: the caller
 * decides what to do with participants that cannot take part (the hook declares them dead).
 */
export class FissParticipantError extends LockFabricError {
  readonly code = 'FISS_RECOVERY_PARTICIPANTS';
  constructor(
    readonly stage: FissStage,
    readonly failures: readonly { readonly machine: NodeId; readonly error: unknown }[],
  ) {
    super(`fisslock recovery ${stage}: ${failures.map((f) => `machine ${f.machine}: ${errorMessage(f.error)}`).join('; ')}`);
  }

  get machines(): NodeId[] {
    return this.failures.map((f) => f.machine);
  }
}

/** `call` on every participant; waits for all, then throws one error naming each that failed. */
async function onEvery<T>(stage: FissStage, participants: readonly FissParticipant[], call: (p: FissParticipant) => Promise<T>): Promise<T[]> {
  const settled = await Promise.allSettled(participants.map(async (p) => call(p)));
  const failures = settled.flatMap((r, i) => (r.status === 'rejected' ? [{ machine: (participants[i] as FissParticipant).machine, error: r.reason as unknown }] : []));
  if (failures.length > 0) throw new FissParticipantError(stage, failures);
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Span attribute names of a recovery (besides lockfabric.protocol). */
export const RECOVERY_ATTR = {
  epoch: 'lockfabric.recovery.epoch',
  member: 'lockfabric.recovery.member',
  failed: 'lockfabric.recovery.failed',
  survivors: 'lockfabric.recovery.survivors',
  agents: 'lockfabric.recovery.agents',
  held: 'lockfabric.recovery.held',
  woken: 'lockfabric.recovery.woken',
  aborted: 'lockfabric.recovery.aborted',
  registers: 'lockfabric.recovery.registers',
  problems: 'lockfabric.recovery.problems',
} as const;

/**
 * The one S1–S3 driver (FissLock §5.3): the coordinator runs it over the control bus (live, and
 * the sim's control plane), recoverInProcess over pools called directly. After S0 (a restarted switch comes up
 * free with seq 0): S1 pause every survivor and gather reports, S2 repair with the library's pure
 * function and send each survivor its orders, S3 write the switch through its control plane —
 * held locks only, survivors' seq windows to 0, failed machines' windows fenced. Every call
 * carries the recovery epoch; a participant ignores orders of an older epoch.
 */
export async function runFissRecovery(params: FissRecoveryParams): Promise<FissRecoveryRun> {
  const { epoch, nowNs } = params;
  const base: Record<string, SpanAttributeValue> = {
    'lockfabric.protocol': 'fisslock',
    [RECOVERY_ATTR.epoch]: Number(epoch),
    [RECOVERY_ATTR.failed]: params.failed.join(','),
    ...(params.member === undefined ? {} : { [RECOVERY_ATTR.member]: params.member }),
  };
  const root = params.trace?.startSpan('recovery', { attributes: base });
  const child = (stage: FissStage): Span | undefined => params.trace?.startSpan(`recovery.${stage}`, { attributes: base, ...(root?.context ? { parent: root.context } : {}) });
  let open: Span | undefined;
  try {
    const steps: FissStepTiming[] = [];
    let start = nowNs();
    open = child('S1');
    const taking = await onEvery('S1', params.participants, (p) => p.pause(epoch));
    const participants = params.participants.filter((_, i) => taking[i] !== false);
    await params.settle?.();
    const reports = await onEvery('S1', participants, (p) => p.report(epoch));
    const agentsSeen = reports.reduce((n, r) => n + r.agents.length, 0);
    steps.push({ stage: 'S1', startNs: start, endNs: nowNs(), detail: `survivors=${participants.length} agents=${agentsSeen}` });
    open?.setAttribute(RECOVERY_ATTR.survivors, participants.length);
    open?.setAttribute(RECOVERY_ATTR.agents, agentsSeen);
    open?.end();

    start = nowNs();
    open = child('S2');
    const input = { failed: params.failed, reports };
    const plan = repairLockState(input, params.repair);
    await onEvery('S2', participants, (p) => p.apply(epoch, ordersFor(plan, p.machine)));
    steps.push({ stage: 'S2', startNs: start, endNs: nowNs(), detail: `held=${plan.agents.length} woken=${plan.wake.length} aborted=${plan.abort.length}` });
    open?.setAttribute(RECOVERY_ATTR.held, plan.agents.length);
    open?.setAttribute(RECOVERY_ATTR.woken, plan.wake.length);
    open?.setAttribute(RECOVERY_ATTR.aborted, plan.abort.length);
    open?.end();

    start = nowNs();
    open = child('S3');
    const policy = typeof params.policy === 'function' ? params.policy() : params.policy;
    // every rack's decider (one switch unless the cluster has several racks, FissLock §5.4)
    const { image, written } = await writeRackImages(params.control, plan, policy);
    await params.onSwitchWritten?.();
    await onEvery('S3', participants, async (p) => p.resume?.(epoch));
    steps.push({ stage: 'S3', startNs: start, endNs: nowNs(), detail: `registers=${written}` });
    open?.setAttribute(RECOVERY_ATTR.registers, written);
    open?.end();
    open = undefined;

    const problems = checkRepairPlan(input, plan, image);
    root?.setAttribute(RECOVERY_ATTR.survivors, participants.length);
    root?.setAttribute(RECOVERY_ATTR.held, plan.agents.length);
    root?.setAttribute(RECOVERY_ATTR.registers, written);
    root?.setAttribute(RECOVERY_ATTR.problems, problems.length);
    return { epoch, machines: participants.map((p) => p.machine), steps, plan, reports, image, registersWritten: written, problems };
  } catch (error) {
    // the step that failed and the recovery both carry the error (the hook retries with a new root)
    open?.recordError(error);
    open?.end();
    root?.recordError(error);
    throw error;
  } finally {
    root?.end();
  }
}
