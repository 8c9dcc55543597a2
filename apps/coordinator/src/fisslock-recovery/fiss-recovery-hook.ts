import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger, MalformedInputCounter, Subjects } from '@lockfabric/live';
import type { Clock, NodeId, Trace } from '@lockfabric/ports';
import { create, toBinary } from '@bufbuild/protobuf';
import { FissSwitchAdmissionSchema, FissSwitchAnnounceSchema, decodeWire } from '@lockfabric/wire';
import type { RecoveryBook } from '../recovery-book.js';
import { runFissRecovery } from './fiss-recovery-driver.js';
import type { FissRecoveryRun } from './fiss-recovery-driver.js';
import { NatsFissParticipant } from './nats-participant.js';
import { GrpcDeciderControl } from './switch-decider-control.js';

export interface FissRecoveryHookDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly recoveries: RecoveryBook;
  readonly malformed: MalformedInputCounter;
  /** The membership epoch now: every recovery call carries it. */
  readonly epoch: () => bigint;
  /** Compute nodes the failure detector holds alive (candidates; those without a FissLock pool decline). */
  readonly liveComputeNodes: () => readonly NodeId[];
  /** Per NATS call to a compute node. Default 2000 ms. */
  readonly callTimeoutMs?: number;
  /** Between the pause and the reports, so packets already on NATS land. Default 50 ms. */
  readonly settleMs?: number;
  /** Where each recovery's `recovery` span (children `recovery.S1|S2|S3`) goes. */
  readonly trace?: Trace;
}

export interface FailedCompute {
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
}

interface RecoveredMember extends FailedCompute {
  readonly role: string;
}

/** A recovery that fails (a node did not answer, the switch is not up yet) is tried again, the whole S1–S3, this often. */
const MAX_ATTEMPTS = 3;
const RETRY_DELAY_MS = 500;

export interface FissRecoveryHook {
  /** A switch was seen for the first time: it is opened at once (admission, switch-dataplane README). */
  switchJoined(member: FailedCompute): void;
  /** A switch came back with a new incarnation (S0 happened: its registers are fresh). */
  switchBack(member: FailedCompute): void;
  /** A compute node was declared dead. */
  computeDead(member: FailedCompute): void;
  /** Recoveries run to the end (for tests and logs). */
  readonly completed: readonly FissRecoveryRun[];
  /** Admission orders published, oldest first (for tests and logs). */
  readonly admissions: readonly { readonly node: number; readonly epoch: bigint; readonly open: boolean }[];
  /** Resolves when every recovery queued so far has ended. */
  idle(): Promise<void>;
  close(): void;
}

// switch-dataplane announces itself (libs/live), every second, so a restarted coordinator relearns it.
export { announceFissSwitch } from '@lockfabric/live';

/**
 * The coordinator's FissLock recovery trigger (spec §7.2): after a switch restart (S0 done by the
 * restart itself) or a compute-node death, it runs S1–S3 over NATS with every live compute node
 * that runs a FissLock agent pool, writes S3 through the switch's SwitchControl gRPC (its address
 * comes from an announcement on `ctl.fiss.switch`) and records the step timings in the recovery
 * book. Recoveries run one at a time, in order; one that fails is logged and recorded as failed.
 * With no announced switch or no FissLock pool anywhere nothing runs (FissLock is not in use).
 */
export function startFissRecoveryHook(deps: FissRecoveryHookDeps): FissRecoveryHook {
  const { nc, subjects, logger } = deps;
  const callTimeoutMs = deps.callTimeoutMs ?? 2_000;
  const settleMs = deps.settleMs ?? 50;
  let switchAddress: string | undefined;
  let queue: Promise<void> = Promise.resolve();
  const completed: FissRecoveryRun[] = [];
  const admissions: { node: number; epoch: bigint; open: boolean }[] = [];
  let closed = false;

  // The switch's admission fence (switch-dataplane README "Admission"): a switch is opened when first
  // seen, closed at the epoch of a FissLock recovery before S1 and opened again after S3, so no
  // packet stamped before the recovery is decided during or after it. Node 0 addresses every switch.
  const admitSubject = `${subjects.fissSwitch()}.admit`;
  const admit = (node: number, epoch: bigint, open: boolean): void => {
    admissions.push({ node, epoch, open });
    try {
      nc.publish(admitSubject, toBinary(FissSwitchAdmissionSchema, create(FissSwitchAdmissionSchema, { node, epoch, open })));
    } catch (error) {
      logger.warn(`fisslock recovery: could not publish admission on ${admitSubject}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  /** The switch a recovery concerns: the restarted one, or every switch for a compute death. */
  const switchOf = (member: RecoveredMember): number => (member.role === 'switch' ? member.node : 0);

  const announceSubject = subjects.fissSwitch();
  const subscription: Subscription = nc.subscribe(announceSubject, {
    callback: (error, msg) => {
      if (error) return logger.warn(`coordinator: subscription error on ${announceSubject}: ${error.message}`);
      try {
        const announce = decodeWire(FissSwitchAnnounceSchema, msg.data, announceSubject);
        if (!/^[^\s:]+:\d{1,5}$/.test(announce.controlAddress)) throw new Error(`control address ${JSON.stringify(announce.controlAddress)} is not host:port`);
        if (announce.controlAddress !== switchAddress) logger.info(`fisslock recovery: switch of rack ${announce.rack} controlled at ${announce.controlAddress}`);
        switchAddress = announce.controlAddress;
      } catch (decodeError) {
        deps.malformed.record(announceSubject, decodeError);
      }
    },
  });

  /** Nothing ran (FissLock not in use, or recovery gave up): a compute death's fisslock action is over all the same. */
  const noSteps = (member: RecoveredMember): void => {
    if (member.role === 'compute') deps.recoveries.recordSteps(member.role, member.id, 'fisslock', [], deps.clock.nowNs());
  };
  /**
   * FissLock recovery does not apply (another program, or none announced): a closed (restarted)
   * switch is opened without raising its epoch — epoch 0 changes nothing on an open one — so nodes
   * whose view lags are not refused by a program that does not need the fence.
   */
  const skipped = (member: RecoveredMember): void => {
    admit(switchOf(member), 0n, true);
    noSteps(member);
  };

  const run = async (member: RecoveredMember, failed: readonly NodeId[], attempt: number): Promise<void> => {
    if (closed) return;
    const { role, id } = member;
    const address = switchAddress;
    const epoch = deps.epoch();
    if (!address) {
      logger.info(`fisslock recovery after ${role}/${id}: skipped, no switch control address announced on ${announceSubject} (FissLock not in use)`);
      skipped(member);
      return;
    }
    const participants = deps.liveComputeNodes().filter((n) => !failed.includes(n)).map((n) => new NatsFissParticipant(nc, subjects, n, callTimeoutMs));
    const control = new GrpcDeciderControl(address);
    try {
      await control.load();
      if (!control.arrays.includes('fisslock.free')) {
        logger.info(`fisslock recovery after ${role}/${id}: skipped, the switch at ${address} runs no fisslock program`);
        skipped(member);
        return;
      }
      admit(switchOf(member), epoch, false);
      const result = await runFissRecovery({
        epoch,
        participants,
        failed,
        control,
        policy: () => participants.find((p) => p.policy !== undefined)?.policy ?? 'read-preferring',
        nowNs: () => deps.clock.nowNs(),
        settle: () => new Promise((resolve) => setTimeout(resolve, settleMs)),
        member: `${role}/${id}`,
        // opened before the survivors resume, so their first packets (stamped with this epoch) pass
        onSwitchWritten: () => admit(switchOf(member), epoch, true),
        ...(deps.trace ? { trace: deps.trace } : {}),
      });
      if (result.machines.length === 0) {
        logger.info(`fisslock recovery after ${role}/${id}: no compute node runs a FissLock agent pool; nothing to repair`);
        noSteps(member);
        return;
      }
      completed.push(result);
      let recorded = deps.recoveries.recordSteps(role, id, 'fisslock', result.steps, deps.clock.nowNs());
      if (!recorded) {
        // restarted faster than detection: no recovery was opened; open and close one so Status shows the steps
        deps.recoveries.begin(member, epoch, result.steps[0]?.startNs ?? deps.clock.nowNs());
        deps.recoveries.rejoined(role, id, deps.clock.nowNs());
        recorded = deps.recoveries.recordSteps(role, id, 'fisslock', result.steps, deps.clock.nowNs());
      }
      const timings = result.steps.map((s) => `${s.stage} ${((s.endNs - s.startNs) / 1e6).toFixed(1)} ms (${s.detail})`).join(', ');
      logger.info(`fisslock recovery after ${role}/${id}, epoch ${epoch}, machines [${result.machines.join(', ')}]: ${timings}${recorded ? '' : ' (no open recovery to record it in)'}`);
      if (result.problems.length > 0) logger.warn(`fisslock recovery epoch ${epoch}: the repair breaks its invariants: ${result.problems.slice(0, 5).join('; ')}`);
    } catch (error) {
      const retry = attempt < MAX_ATTEMPTS;
      logger.warn(`fisslock recovery after ${role}/${id}, epoch ${epoch}, attempt ${attempt} failed: ${error instanceof Error ? error.message : String(error)}${retry ? `; again in ${RETRY_DELAY_MS} ms` : '; giving up'}`);
      if (retry) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
        return run(member, failed, attempt + 1);
      }
      // not reopened: if S1 began, its registers need not match the agents (the next recovery opens it)
      logger.warn(`fisslock recovery after ${role}/${id}: giving up; switch ${switchOf(member) || '(all)'} is not reopened (closed to stamped lock packets if S1 of epoch ${epoch} began)`);
      noSteps(member);
    } finally {
      control.close();
    }
  };

  const enqueue = (member: RecoveredMember, failed: readonly NodeId[]): void => {
    queue = queue.then(() => run(member, failed, 1)).catch(() => undefined);
  };

  return {
    switchJoined: (member) => admit(member.node, deps.epoch(), true),
    switchBack: (member) => enqueue({ role: 'switch', ...member }, []),
    computeDead: (member) => enqueue({ role: 'compute', ...member }, [member.node]),
    completed,
    admissions,
    idle: () => queue,
    close: () => {
      closed = true;
      subscription.unsubscribe();
    },
  };
}
