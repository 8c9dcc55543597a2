import type { FissPolicy, AttemptPolicyOptions, FissParticipant, FissRecoveryRun, FissSwitchControl, FissSwitchControlFactory } from '@lockfabric/lock-fisslock';
import { MalformedInputError, NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { NodeId, Trace } from '@lockfabric/ports';
import { create, toBinary } from '@bufbuild/protobuf';
import { FissStuckLockSchema, FissSwitchAdmissionSchema, FissSwitchAnnounceSchema, decodeWire } from '@lockfabric/wire';
import type { DriverContext, DriverMember, MemberRecoveryDriver } from '@lockfabric/control';
import type { LockReportAnswer, StuckLockReport, StuckReason, StuckTriageLimits, StuckTriageStats } from '@lockfabric/lock-fisslock';
import { DEFAULT_ATTEMPT_POLICY, createStuckTriage, nextStep, FissParticipantError, runFissRecovery } from '@lockfabric/lock-fisslock';
import { BusFissParticipant } from './bus-participant.js';
import { AnnouncedSwitches } from './rack-switches.js';
import { FISS_SUBJECTS } from './subjects.js';

/** A compute node as the hook drives it; `policy` is learnt from its pause. */
export type HookParticipant = FissParticipant & { readonly policy?: FissPolicy | undefined };

export interface FissRecoveryHookDeps extends DriverContext {
  /** The membership epoch now: every recovery call carries it. */
  readonly epoch: () => bigint;
  /** Compute nodes the failure detector holds alive (candidates; those without a FissLock pool decline). */
  readonly liveComputeNodes: () => readonly NodeId[];
  /**
   * Whether the first membership view is out. A recovery of a switch first seen closed waits for
   * it: before it, the epoch is no higher than the one the compute nodes hold, and they refuse
   * calls of an older epoch. Default: always.
   */
  readonly hasView?: () => boolean;
  /** Switch nodes the failure detector holds alive; a recovery whose switch is dead is left to that switch's restart. Default: every switch lives. */
  readonly liveSwitches?: () => readonly NodeId[];
  /**
   * Declares a compute node dead that cannot take part in a recovery (the coordinator's
   * membership: a view without it, a FailureNotice, its recoveries). Called synchronously before the
   * recovery runs again without it; without this dependency it is only left out.
   */
  readonly declareDead?: (node: NodeId, reason: string) => void;
  /**
   * Stuck-lock reports (`ctl.report.fiss.stuck`) closer than this to the end of the last repair they
   * triggered are counted and dropped: one S1–S3 repairs every lock, and a watchdog that keeps
   * flagging must not keep the cluster paused. Default 2000 ms.
   */
  readonly stuckRepairIntervalMs?: number;
  /** Per call to a compute node. Default 2000 ms. */
  readonly callTimeoutMs?: number;
  /** Bounds of the stalled-queue confirmation (deadline: default callTimeoutMs; rate; in flight). */
  readonly triage?: StuckTriageLimits;
  /** Test-only: a stalled-queue suspicion is repaired without asking the nodes first. */
  readonly mutantRepairSuspicionUnconfirmed?: boolean;
  /** Between the pause and the reports, so packets already on NATS land. Default 50 ms. */
  readonly settleMs?: number;
  /** Between checks while waiting for a switch's address or the first view. Default 50 ms. */
  readonly pollMs?: number;
  /** How long to listen for a switch's control address (it announces every second) before taking FissLock as not in use. Default 2500 ms. */
  readonly announceWaitMs?: number;
  readonly attempts?: AttemptPolicyOptions;
  /** Where each recovery's `recovery` span (children `recovery.S1|S2|S3`) goes. */
  readonly trace?: Trace;
  /** The control plane of the announced switch (live: SwitchControl gRPC; sim: the switch model). */
  readonly switchControl: FissSwitchControlFactory;
  /** Racks whose switches decide the lock ids (FissLock §5.4): recovery waits for and writes every one. Default 1. */
  readonly racks?: number;
  /** Test seam: the participant of a compute node (request/reply on the bus by default). */
  readonly participant?: (node: NodeId) => HookParticipant;
}

/** A switch, or a compute node declared dead, as the hook hears of it. */
export type FailedCompute = DriverMember;

interface RecoveredMember extends FailedCompute {
  /** `lock`: a stuck-lock repair, which has no member in the recovery book. */
  readonly role: string;
}

/** What became of the stuck-lock reports (`ctl.report.fiss.stuck`). */
export interface StuckLockStats {
  reports: number;
  /** S1–S3 runs queued for them. */
  repairs: number;
  /** Reports covered by a repair already queued, or too close to the last one. */
  coalesced: number;
}

export interface FissRecoveryHook extends MemberRecoveryDriver {
  /**
   * A switch was seen for the first time (this coordinator started, or the switch did). An open
   * switch stays open; a closed one — restarted, or closed mid-recovery, while no coordinator
   * ran, or new — gets S1–S3 before it opens (README "When the coordinator dies and restarts").
   */
  switchJoined(member: FailedCompute): void;
  /** A switch came back with a new incarnation (S0 happened: its registers are fresh). */
  switchBack(member: FailedCompute): void;
  /** A compute node was declared dead. */
  computeDead(member: FailedCompute): void;
  /**
   * A compute node's watchdog flagged a lock (spec §12.9). The repair is one S1–S3 over every live
   * compute node with none failed — the same steps as after a switch restart, which rebuild every
   * lock from the agents' and clients' records, the stuck one included. A stalled-queue suspicion
   * is repaired only once every live node's records of the lock confirm it (stuck-triage.ts).
   */
  lockStuck(report: StuckLockReport): void;
  readonly stuck: StuckLockStats;
  /** What the triage made of the reports: suspicions confirmed, dismissed, unanswered, dropped. */
  readonly triage: Readonly<StuckTriageStats>;
  /** Recoveries run to the end (for tests and logs). */
  readonly completed: readonly FissRecoveryRun[];
  /** Admission orders published, oldest first (for tests and logs). */
  readonly admissions: readonly { readonly node: number; readonly epoch: bigint; readonly open: boolean }[];
  /** Compute nodes this hook had declared dead because they could not take part (for tests and logs). */
  readonly excluded: readonly NodeId[];
  /** Resolves when every recovery queued so far has ended. */
  idle(): Promise<void>;
  close(): void;
}

const DEFAULT_POLL_MS = 50;
/** What a compute node may report on `ctl.report.fiss.stuck` (libs/locks/fisslock StuckReason). */
const STUCK_REASONS: readonly StuckReason[] = ['agent-without-holders', 'orphaned-holder', 'bouncing', 'stalled-queue'];
/** A view is due after the warm-up (k·H); past this, the recovery goes ahead with the epoch it has. */
const VIEW_WAIT_LIMIT_MS = 60_000;

/**
 * The coordinator's FissLock recovery trigger (spec §7.2): after a switch restart (S0 done by the
 * restart itself), a switch first seen closed, or a compute-node death, it runs S1–S3 over the
 * control bus with every live compute node that runs a FissLock agent pool, writes S3 through the switch's
 * SwitchControl gRPC (its address comes from an announcement on `ctl.switch`) and records the
 * step timings in the recovery book. Recoveries run one at a time, in order. One that fails is
 * tried again (attempt-policy.ts) until S3 is written: the switch is never left closed while live
 * nodes wait on it. With no announced switch or no FissLock pool anywhere nothing runs.
 */
export function startFissRecoveryHook(deps: FissRecoveryHookDeps): FissRecoveryHook {
  const { bus, subjects, logger, clock } = deps;
  const nowMs = (): number => clock.nowNs() / NS_PER_MS;
  const callTimeoutMs = deps.callTimeoutMs ?? 2_000;
  const settleMs = deps.settleMs ?? 50;
  const announceWaitMs = deps.announceWaitMs ?? 2_500;
  const pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
  const startedAtMs = nowMs();
  const makeParticipant = deps.participant ?? ((node: NodeId) => new BusFissParticipant(bus, subjects, node, callTimeoutMs));
  const makeControl = deps.switchControl;
  const announced = new AnnouncedSwitches(deps.racks ?? 1);
  let queue: Promise<void> = Promise.resolve();
  let queued = 0;
  const completed: FissRecoveryRun[] = [];
  const admissions: { node: number; epoch: bigint; open: boolean }[] = [];
  const excluded: NodeId[] = [];
  let closed = false;
  // close() ends every wait at once
  const stop = new AbortController();
  const sleep = (ms: number): Promise<void> => clock.sleep(ms * NS_PER_MS, stop.signal).catch(() => undefined);

  // What a recovery that stopped before S3 leaves to the next one: failed machines whose seq
  // windows are not fenced yet, and members whose fisslock action is not recorded yet.
  const carriedFailed = new Set<NodeId>();
  const carriedMembers: RecoveredMember[] = [];
  /** Members of the recovery running now; a node this hook declares dead joins them. */
  let current: RecoveredMember[] | undefined;
  const declaring = new Set<NodeId>();

  // The switch's admission fence (switch-dataplane README "Admission"): a switch is opened when first
  // seen open (or not running FissLock), closed at the epoch of a FissLock recovery before S1 and
  // opened again after S3, so no packet stamped before the recovery is decided during or after it.
  // Node 0 addresses every switch.
  const admitSubject = subjects.switchAdmission();
  const admit = (node: number, epoch: bigint, open: boolean): void => {
    admissions.push({ node, epoch, open });
    try {
      bus.publish(admitSubject, toBinary(FissSwitchAdmissionSchema, create(FissSwitchAdmissionSchema, { node, epoch, open })));
    } catch (error) {
      logger.warn(`fisslock recovery: could not publish admission on ${admitSubject}: ${errorMessage(error)}`);
    }
  };
  /** The switch a recovery concerns: the restarted one when only it is concerned, else every switch. */
  const switchOf = (members: readonly RecoveredMember[]): number => {
    // several racks: S3 rewrites every rack's decider, so every switch is fenced
    if (announced.racks > 1) return 0;
    const first = members[0];
    return first && members.every((m) => m.role === 'switch' && m.node === first.node) ? first.node : 0;
  };
  const switchAlive = (node: number): boolean => {
    if (!deps.liveSwitches) return true;
    const live = deps.liveSwitches();
    return node === 0 ? live.length > 0 : live.includes(node);
  };

  const stuck: StuckLockStats = { reports: 0, repairs: 0, coalesced: 0 };
  const stuckIntervalMs = deps.stuckRepairIntervalMs ?? 2_000;
  let stuckQueued: Promise<void> | undefined;
  let lastStuckRepairEndMs = Number.NEGATIVE_INFINITY;
  /** One S1–S3 for a stuck lock (or none, when one queued or just ended covers it); settles when it has. */
  const repairStuck = (report: StuckLockReport): Promise<void> => {
    const label = `lock ${report.lock} (${report.reason}, flagged by compute node ${report.machine})`;
    if (closed) return Promise.resolve();
    if (stuckQueued || nowMs() - lastStuckRepairEndMs < stuckIntervalMs) {
      stuck.coalesced++;
      logger.info(`fisslock: stuck ${label}: covered by a repair ${stuckQueued ? 'already queued' : 'that just ended'}`);
      return stuckQueued ?? Promise.resolve();
    }
    stuck.repairs++;
    logger.warn(`fisslock: stuck ${label}: S1–S3 over every live compute node`);
    const done = new Promise<void>((resolve) =>
      enqueue(async () => {
        stuckQueued = undefined;
        try {
          await recover({ role: 'lock', id: String(report.lock), node: report.machine, incarnation: 0n }, []);
        } finally {
          lastStuckRepairEndMs = nowMs();
          resolve();
        }
      }),
    );
    stuckQueued = done;
    return done;
  };
  /** Every live compute node's records of one lock, without pausing anyone (a node without FissLock is left out). */
  const askLockReports = (lock: number): Promise<LockReportAnswer[]> => {
    const epoch = deps.epoch();
    const asked = deps.liveComputeNodes().map(async (node): Promise<LockReportAnswer[]> => {
      const participant = makeParticipant(node);
      if (!participant.lockReport) return [{ machine: node, missing: 'cannot report one lock' }];
      try {
        const report = await participant.lockReport(epoch, lock);
        return report ? [{ machine: node, report }] : [];
      } catch (error) {
        return [{ machine: node, missing: errorMessage(error) }];
      }
    });
    return Promise.all(asked).then((answers) => answers.flat());
  };
  const triage = createStuckTriage({
    clock,
    confirmDeadlineMs: callTimeoutMs,
    ...deps.triage,
    ask: askLockReports,
    repair: repairStuck,
    onOutcome: (report, outcome, detail) => {
      const label = `fisslock: lock ${report.lock} (${report.reason}, flagged by compute node ${report.machine})`;
      if (outcome === 'dismissed') logger.info(`${label}: every node's records show it held by live clients (a long hold); not repaired`);
      else if (outcome === 'unanswered') logger.warn(`${label}: not confirmed, no repair; unanswered: ${detail ?? '?'}`);
      else if (outcome !== 'repair') logger.info(`${label}: dropped (${outcome === 'busy' ? 'a confirmation or repair of it runs' : outcome === 'rate' ? 'over the suspicion rate' : 'too many in flight'})`);
    },
    ...(deps.mutantRepairSuspicionUnconfirmed === true ? { mutantRepairSuspicionUnconfirmed: true } : {}),
  });
  const lockStuck = (report: StuckLockReport): void => {
    stuck.reports++;
    if (closed) return;
    void triage.handle(report);
  };
  const stuckSubject = subjects.protocolReport(FISS_SUBJECTS, 'stuck');
  const stuckSubscription = bus.subscribe(stuckSubject, (msg) => {
    try {
      const report = decodeWire(FissStuckLockSchema, msg.data, stuckSubject);
      const reason = STUCK_REASONS.find((r) => r === report.reason);
      if (!reason) throw new MalformedInputError(stuckSubject, `unknown stuck reason ${JSON.stringify(report.reason)}`);
      lockStuck({ machine: report.machine, lock: report.lock, reason });
    } catch (decodeError) {
      deps.malformed.record(stuckSubject, decodeError);
    }
  });

  const announceSubject = subjects.switchAnnounce();
  const subscription = bus.subscribe(announceSubject, (msg) => {
    try {
      const announce = decodeWire(FissSwitchAnnounceSchema, msg.data, announceSubject);
      if (!/^[^\s:]+:\d{1,5}$/.test(announce.controlAddress)) throw new MalformedInputError(announceSubject, `control address ${JSON.stringify(announce.controlAddress)} is not host:port`);
      if (announced.record(announce.rack, announce.controlAddress)) logger.info(`fisslock recovery: switch of rack ${announce.rack} controlled at ${announce.controlAddress}`);
    } catch (decodeError) {
      deps.malformed.record(announceSubject, decodeError);
    }
  });

  /**
   * The switch's control address (every rack's, for logs), waiting until `untilMs` for the
   * announcements (a restarted coordinator hears them within a second); undefined if none came.
   */
  const addressBy = async (untilMs: number): Promise<string | undefined> => {
    while (!announced.complete && !closed && nowMs() < untilMs) await sleep(pollMs);
    return announced.any ? announced.label() : undefined;
  };

  /** Nothing ran (FissLock not in use): a compute death's fisslock action is over all the same. */
  const noSteps = (members: readonly RecoveredMember[]): void => {
    for (const m of members) if (m.role === 'compute') deps.recoveries.recordSteps(m.role, m.id, 'fisslock', [], deps.clock.nowNs());
  };
  /**
   * FissLock recovery does not apply (another program, or none announced): a closed (restarted)
   * switch is opened without raising its epoch — epoch 0 changes nothing on an open one — so nodes
   * whose view lags are not refused by a program that does not need the fence.
   */
  const skipped = (members: readonly RecoveredMember[]): void => {
    admit(switchOf(members), 0n, true);
    noSteps(members);
  };

  const record = (members: readonly RecoveredMember[], result: FissRecoveryRun, epoch: bigint): boolean => {
    let recorded = true;
    for (const m of members) {
      if (m.role === 'lock') continue; // a stuck-lock repair: logged, no failed member to record it under
      if (deps.recoveries.recordSteps(m.role, m.id, 'fisslock', result.steps, deps.clock.nowNs())) continue;
      if (m !== members[0]) continue;
      // restarted faster than detection, or first seen closed: no recovery was opened; open and close one so Status shows the steps
      deps.recoveries.begin(m, epoch, result.steps[0]?.startNs ?? deps.clock.nowNs());
      deps.recoveries.rejoined(m.role, m.id, deps.clock.nowNs());
      recorded = deps.recoveries.recordSteps(m.role, m.id, 'fisslock', result.steps, deps.clock.nowNs()) !== undefined && recorded;
    }
    return recorded;
  };

  type Attempt = { kind: 'done' } | { kind: 'failed'; error: unknown };

  /** One S1–S3 over every live compute node outside `failed`; admission closed before S1, opened after S3. */
  const attemptOnce = async (members: readonly RecoveredMember[], failed: readonly NodeId[]): Promise<Attempt> => {
    const lead = members[0] as RecoveredMember;
    const label = `${lead.role}/${lead.id}`;
    const address = await addressBy(startedAtMs + announceWaitMs);
    const epoch = deps.epoch();
    if (!address) {
      logger.info(`fisslock recovery after ${label}: skipped, no switch control address announced on ${announceSubject} (FissLock not in use)`);
      skipped(members);
      return { kind: 'done' };
    }
    const participants = deps.liveComputeNodes().filter((n) => !failed.includes(n)).map(makeParticipant);
    let control: FissSwitchControl;
    try {
      // every rack's switch with several (an unannounced one fails this attempt; it is tried again)
      control = announced.open(makeControl);
    } catch (error) {
      return { kind: 'failed', error };
    }
    try {
      await control.load();
      if (!control.arrays.includes('fisslock.free')) {
        logger.info(`fisslock recovery after ${label}: skipped, the switch at ${address} runs no fisslock program`);
        skipped(members);
        return { kind: 'done' };
      }
      const target = switchOf(members);
      admit(target, epoch, false);
      const result = await runFissRecovery({
        epoch,
        participants,
        failed,
        control,
        policy: () => participants.find((p) => p.policy !== undefined)?.policy ?? 'read-preferring',
        nowNs: () => deps.clock.nowNs(),
        settle: () => sleep(settleMs),
        member: label,
        // opened before the survivors resume, so their first packets (stamped with this epoch) pass
        onSwitchWritten: () => admit(target, epoch, true),
        ...(deps.trace ? { trace: deps.trace } : {}),
      });
      if (result.machines.length === 0) {
        logger.info(`fisslock recovery after ${label}: no compute node runs a FissLock agent pool; nothing to repair`);
        noSteps(members);
        return { kind: 'done' };
      }
      completed.push(result);
      const recorded = record(members, result, epoch);
      const timings = result.steps.map((s) => `${s.stage} ${((s.endNs - s.startNs) / 1e6).toFixed(1)} ms (${s.detail})`).join(', ');
      const also = members.length > 1 ? ` (also for ${members.slice(1).map((m) => `${m.role}/${m.id}`).join(', ')})` : '';
      logger.info(`fisslock recovery after ${label}${also}, epoch ${epoch}, machines [${result.machines.join(', ')}], failed [${failed.join(', ')}]: ${timings}${recorded ? '' : ' (no open recovery to record it in)'}`);
      if (result.problems.length > 0) logger.warn(`fisslock recovery epoch ${epoch}: the repair breaks its invariants: ${result.problems.slice(0, 5).join('; ')}`);
      return { kind: 'done' };
    } catch (error) {
      return { kind: 'failed', error };
    } finally {
      control.close();
    }
  };

  /** S1–S3 for `member` (with whatever an earlier recovery left), tried until S3 is written or the next recovery takes it over. */
  const recover = async (member: RecoveredMember, failedOwn: readonly NodeId[]): Promise<void> => {
    if (closed) return;
    // A carried recovery of this same member (its first sight, before it died again) is this one: one S1–S3, recorded once.
    const members = [member, ...carriedMembers.splice(0).filter((m) => m.role !== member.role || m.id !== member.id)];
    const live = new Set(deps.liveComputeNodes());
    // a carried machine that rejoined since takes part with a new incarnation: it is no longer failed
    let failed = [...new Set([...failedOwn, ...[...carriedFailed].filter((m) => !live.has(m))])].sort((a, b) => a - b);
    current = members;
    try {
      for (let attempt = 1; !closed; attempt++) {
        const outcome = await attemptOnce(members, failed);
        if (outcome.kind === 'done') {
          for (const m of failed) carriedFailed.delete(m);
          return;
        }
        const error = outcome.error;
        const culprits = error instanceof FissParticipantError ? error.machines : [];
        const step = nextStep({ attempt, culprits, switchAlive: switchAlive(switchOf(members)), laterQueued: queued > 0 }, deps.attempts ?? DEFAULT_ATTEMPT_POLICY);
        const message = errorMessage(error);
        const lead = `fisslock recovery after ${member.role}/${member.id}, attempt ${attempt}`;
        if (step.kind === 'exclude') {
          const reason = `did not take part in FissLock recovery (${attempt} attempts): ${message}`;
          logger.warn(`${lead} failed: ${message}; compute node(s) ${step.machines.join(', ')} declared dead, S1–S3 again without them`);
          for (const m of step.machines) {
            excluded.push(m);
            declaring.add(m);
            try {
              deps.declareDead?.(m, reason);
            } finally {
              declaring.delete(m);
            }
          }
          failed = [...new Set([...failed, ...step.machines])].sort((a, b) => a - b);
          attempt = 0;
          continue;
        }
        if (step.kind === 'defer') {
          logger.warn(`${lead} failed: ${message}; ${step.reason} (the switch stays closed until then)`);
          for (const m of failed) carriedFailed.add(m);
          carriedMembers.push(...members);
          return;
        }
        logger.warn(`${lead} failed: ${message}; again in ${step.delayMs} ms (the switch stays closed to stamped packets meanwhile)`);
        await sleep(step.delayMs);
      }
    } finally {
      current = undefined;
    }
  };

  /** First sight of a switch: open if it is open (or not ours to fence); closed, it needs S1–S3 first. */
  const firstSight = async (member: RecoveredMember): Promise<void> => {
    const address = await addressBy(nowMs() + announceWaitMs);
    if (closed) return;
    if (!address) return admit(member.node, deps.epoch(), true);
    let fiss = true;
    let admission: FissSwitchControl['admission'] | undefined;
    let control: FissSwitchControl | undefined;
    try {
      control = announced.open(makeControl);
      await control.load();
      fiss = control.arrays.includes('fisslock.free');
      admission = control.admission;
    } catch (error) {
      logger.warn(`fisslock recovery: switch/${member.id} at ${address} did not describe itself (${errorMessage(error)}); recovered before it opens`);
    } finally {
      control?.close();
    }
    if (!fiss || admission?.open === true) {
      // open: the coordinator before this one opened it after S3 (or at its first sight), and no restart closed it since
      if (admission?.open === true) logger.info(`fisslock recovery: switch/${member.id} is open at epoch ${admission.epoch}; its registers stand`);
      return admit(member.node, deps.epoch(), true);
    }
    for (const untilMs = nowMs() + VIEW_WAIT_LIMIT_MS; !(deps.hasView?.() ?? true) && !closed && nowMs() < untilMs; ) await sleep(pollMs);
    logger.warn(`fisslock recovery: switch/${member.id} is closed at epoch ${admission?.epoch ?? 0n} (new, or restarted or closed mid-recovery while no coordinator ran): S1–S3 before it opens`);
    await recover(member, []);
  };

  const enqueue = (job: () => Promise<void>): void => {
    queued++;
    queue = queue
      .then(() => {
        queued--;
        return job();
      })
      .catch((error: unknown) => logger.warn(`fisslock recovery: ${errorMessage(error)}`));
  };

  return {
    switchJoined: (member) => enqueue(() => firstSight({ role: 'switch', ...member })),
    switchBack: (member) => enqueue(() => recover({ role: 'switch', ...member }, [])),
    computeDead: (member) => {
      const dead: RecoveredMember = { role: 'compute', ...member };
      // declared dead by this hook mid-recovery: the running recovery leaves it out and records its steps
      if (declaring.has(member.node) && current) return void current.push(dead);
      enqueue(() => recover(dead, [member.node]));
    },
    lockStuck,
    stuck,
    triage: triage.stats,
    completed,
    admissions,
    excluded,
    idle: () => queue,
    close: () => {
      closed = true;
      subscription();
      stuckSubscription();
      triage.close();
      stop.abort();
    },
  };
}
