import { toBinary } from '@bufbuild/protobuf';
import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, NodeId, Trace } from '@lockfabric/ports';
import { FailureNoticeSchema, MembershipViewSchema, RecoveryPhaseSchema, ResetOrderSchema, decodeWire } from '@lockfabric/wire';
import type { ControlBus, Unsubscribe } from './bus.js';
import type { HeartbeatOutcome, MemberRecord, MemberState } from './failure-detector.js';
import { decodeHeartbeat } from './heartbeat-decoder.js';
import type { Logger, MalformedSink } from './logger.js';
import { Membership } from './membership.js';
import type { MembershipView, PublishReason } from './membership.js';
import type { MemberRecoveryDriver, MemberRecoveryDriverFactory } from './recovery-driver.js';
import { startQueueRecoveryHook } from './queue-lock-recovery/queue-recovery-hook.js';
import type { QueueRecoveryHook, QueueRecoveryHookDeps } from './queue-lock-recovery/queue-recovery-hook.js';
import { RecoveryBook } from './recovery-book.js';
import type { Recovery } from './recovery-book.js';
import { queueLockProtocols } from './recovery-rules.js';
import type { ProtocolRecoveries } from './recovery-rules.js';
import { failureNoticeToWire } from './recovery-wire.js';
import type { Subjects } from './subjects.js';
import { recallView } from './view-recall.js';
import { membershipViewToWire } from './view-wire.js';

/** What the control plane counts as it goes; the live coordinator turns these into metrics. */
export interface ControlPlaneEvents {
  heartbeat?(outcome: HeartbeatOutcome): void;
  viewPublished?(reason: PublishReason): void;
  transition?(to: MemberState): void;
  recovery?(event: 'begun' | 'done' | 'phase-report' | 'table'): void;
}

export interface ControlPlaneDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  /** Live: RealClock (epochs take their floor from it); sim: the run's virtual clock. */
  readonly clock: Clock;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
  readonly heartbeatIntervalMs: number;
  readonly missesBeforeSuspect: number;
  readonly confirmAfterMs?: number;
  readonly warmupMs?: number;
  readonly announceIntervalMs?: number;
  readonly maxMembers?: number;
  /**
   * The compute nodes the deployment runs (live: `coordinator.computeNodes`; sim: the run's nodes).
   * Each one not heard within a timeout of this start is declared dead and recovered like a silent
   * member, though no view ever listed it (Membership `expected`). Heartbeat ids are the node ids.
   */
  readonly expectedComputeNodes?: readonly NodeId[];
  /** Test only: `expectedComputeNodes` is ignored, as before it existed. */
  readonly mutantIgnoreExpectedMembers?: boolean;
  /** Failure detection runs this often; default half a heartbeat interval, at least 5 ms. */
  readonly tickMs?: number;
  /** The protocols' recovery rules (live: the lock catalog's); without them only a memory node's table is booked. */
  readonly protocolRecoveries?: ProtocolRecoveries;
  /** Lease bounds per protocol for recovery bookkeeping, when the deployment's options differ from the defaults. */
  readonly leaseBoundsMs?: Readonly<Record<string, number>>;
  /** Finished recoveries kept for Status. */
  readonly keepRecoveries?: number;
  /**
   * After the bus reports the connection back, members get this long (plus the suspicion
   * timeout) to be heard again before anyone is suspected. Default 1000 ms.
   */
  readonly reconnectGraceMs?: number;
  /** Spans of the drivers' recoveries; none when omitted. */
  readonly trace?: Trace;
  /**
   * Protocols' contributed recoveries, started and told of each death in this order (live: the
   * catalog's coordinator plug-ins contribute them). One list: those that follow switches as well
   * (FissLock's S1–S3) and those that only hear compute deaths (a MachineDeathRecoveryFactory,
   * NetLock's switch-queue purge). A protocol whose rule is `driven` and has no driver here, nor
   * names the queue-lock recovery, leaves its action open.
   */
  readonly recoveryDrivers?: readonly MemberRecoveryDriverFactory[];
  /** Overrides of the queue-lock recovery hook's timings. */
  readonly queue?: Pick<QueueRecoveryHookDeps, 'callTimeoutMs' | 'gateLeaseMs' | 'drainPollMs' | 'queueHosts'>;
  /**
   * Once this coordinator's first view is out, run one queue-lock recovery with no newly dead
   * node (QueueRecoveryHook.afterRestart): the repair of a recovery a crashed predecessor left
   * half done, as FissLock recovers a switch first seen closed (FissLock §7.2). It pauses every
   * queue-lock node once per coordinator start. Default false (the live coordinator does not yet;
   * the sim control plane does).
   */
  readonly queueRestartRecovery?: boolean;
  readonly events?: ControlPlaneEvents;
}

export interface ControlPlane {
  readonly membership: Membership;
  readonly recoveries: RecoveryBook;
  /** The started recovery drivers, in the order of `recoveryDrivers`. */
  readonly drivers: readonly MemberRecoveryDriver[];
  readonly queueLocks: QueueRecoveryHook;
  /** Stops detection, the drivers and every subscription; in-flight recovery steps end at their next wait. */
  close(): void;
}

const NOTABLE: ReadonlySet<HeartbeatOutcome> = new Set(['joined', 'refuted', 'restarted', 'rejoined', 'identified']);

/**
 * The coordinator's control plane, over a ControlBus and a Clock so it runs live (NATS) and in
 * sim (the in-memory bus on the virtual clock) as the same code: heartbeats in from `hb.*.*`,
 * failure detection every tick, membership views out on `ctl.membership` (a new epoch per change of
 * the live set, the same view again every announce interval), a FailureNotice on
 * `ctl.recovery.failure` per member declared dead, and the recovery drivers: the protocols'
 * contributed drivers (switch restarts and compute deaths, or compute deaths only), the queue locks' gate/drain/reset.
 * Input that does not decode is counted and dropped.
 */
export function startControlPlane(deps: ControlPlaneDeps): ControlPlane {
  const { bus, subjects, logger, clock, malformed } = deps;
  const events = deps.events ?? {};
  const stop = new AbortController();
  const subscriptions: Unsubscribe[] = [];
  const warn = (message: string) => logger.warn(message);
  const recoveries = new RecoveryBook({
    ...(deps.protocolRecoveries === undefined ? {} : { protocols: deps.protocolRecoveries }),
    ...(deps.leaseBoundsMs === undefined ? {} : { leaseBoundsMs: deps.leaseBoundsMs }),
    ...(deps.keepRecoveries === undefined ? {} : { keepDone: deps.keepRecoveries }),
  });
  const failureSubject = subjects.recovery('failure');
  const phaseSubject = subjects.recovery('phase');
  const tableSubject = subjects.recovery('table');
  const silenceMs = deps.heartbeatIntervalMs * deps.missesBeforeSuspect;
  const logDone = (recovery: Recovery) => {
    events.recovery?.('done');
    const tookMs = ((recovery.doneAtNs ?? recovery.detectedAtNs) - recovery.detectedAtNs) / 1e6;
    const unrecoverable = recovery.actions.filter((a) => a.mechanism === 'none').map((a) => a.protocol);
    logger.info(`recovery #${recovery.seq} of ${recovery.role}/${recovery.id} (epoch ${recovery.epoch}) done after ${tookMs.toFixed(1)} ms${unrecoverable.length ? `; no recovery by design for ${unrecoverable.join(', ')}` : ''}`);
  };

  const membershipSubject = subjects.membership();
  let firstView = true;
  const publish = (view: MembershipView, reason: PublishReason) => {
    events.viewPublished?.(reason);
    if (firstView && deps.queueRestartRecovery) queueLocks.afterRestart();
    firstView = false;
    if (reason === 'change') {
      const live = view.members.filter((m) => m.state !== 'dead').map((m) => `${m.role}/${m.id}#${m.incarnation}`);
      logger.info(`membership epoch ${view.epoch}: ${live.length} live [${live.join(', ')}]`);
    }
    try {
      bus.publish(membershipSubject, toBinary(MembershipViewSchema, membershipViewToWire(view)));
    } catch (error) {
      // The next change or announce carries the view again.
      warn(`coordinator: could not publish the view of epoch ${view.epoch}: ${errorMessage(error)}`);
    }
  };
  const membership = new Membership(
    {
      heartbeatIntervalMs: deps.heartbeatIntervalMs,
      missesBeforeSuspect: deps.missesBeforeSuspect,
      ...(deps.confirmAfterMs === undefined ? {} : { confirmAfterMs: deps.confirmAfterMs }),
      ...(deps.warmupMs === undefined ? {} : { warmupMs: deps.warmupMs }),
      ...(deps.announceIntervalMs === undefined ? {} : { announceIntervalMs: deps.announceIntervalMs }),
      ...(deps.maxMembers === undefined ? {} : { maxMembers: deps.maxMembers }),
      ...(deps.expectedComputeNodes ? { expected: deps.expectedComputeNodes.map((node) => ({ role: 'compute', id: String(node), node })) } : {}),
      ...(deps.mutantIgnoreExpectedMembers ? { mutantIgnoreExpectedMembers: true } : {}),
    },
    clock.nowNs(),
    publish,
  );
  // A restarted coordinator has heard nobody: the members its predecessor published are watched
  // from now on, so one that died meanwhile is declared dead and recovered (view-recall.ts).
  const recallTimeoutMs = Math.max(deps.warmupMs ?? membership.detector.suspectAfterMs, deps.heartbeatIntervalMs);
  void recallView({ bus, subjects, logger, malformed, timeoutMs: recallTimeoutMs })
    .then((view) => {
      if (!view || stop.signal.aborted) return;
      const taken = membership.recall(view, clock.nowNs());
      logger.info(`coordinator: recalled the view of epoch ${view.epoch} from a participant; ${taken} members watched from this start`);
    })
    .catch((error: unknown) => warn(`coordinator: recalling the last view failed: ${errorMessage(error)}`));

  // Views from elsewhere (another coordinator, or our own echo) only ever raise the epoch.
  subscriptions.push(
    bus.subscribe(membershipSubject, (msg) => {
      try {
        const epoch = decodeWire(MembershipViewSchema, msg.data, membershipSubject).epoch;
        if (epoch > membership.epochs.current) warn(`coordinator: another coordinator published epoch ${epoch}; this one continues above it`);
        membership.observeEpoch(epoch);
      } catch (decodeError) {
        malformed.record(membershipSubject, decodeError);
      }
    }),
  );
  const epoch = () => membership.view?.epoch ?? membership.epochs.current;
  const liveOf = (role: string) => (): NodeId[] => membership.detector.members().filter((m) => m.role === role && m.state === 'alive').map((m) => m.node);
  // protocols' recoveries after a switch restart or a compute-node death (contributed)
  const driverContext = {
    bus, subjects, logger, clock, recoveries, malformed,
    ...(deps.trace ? { trace: deps.trace } : {}),
    epoch,
    liveComputeNodes: liveOf('compute'),
    hasView: () => membership.view !== undefined,
    liveSwitches: liveOf('switch'),
    // a compute node that cannot take part in a driver's recovery is declared dead, so it can go on without it
    declareDead: (node: NodeId, reason: string) => declareComputeDead(node, reason),
  };
  const drivers = (deps.recoveryDrivers ?? []).map((start) => start(driverContext));
  // the queue locks (their rules say so): gate, drain, abort, table reset after a compute-node death (queue-lock-recovery/)
  const queueLocks = startQueueRecoveryHook({
    bus, subjects, logger, clock, recoveries, epoch, liveComputeNodes: liveOf('compute'),
    protocols: queueLockProtocols(deps.protocolRecoveries), ...(deps.queue ?? {}),
  });
  let lastTable: Uint8Array | undefined;
  const republishTable = (memoryId: string) => {
    try {
      if (lastTable) bus.publish(tableSubject, lastTable);
      logger.info(`memory/${memoryId} restarted: its table is empty (free); lock table binding announced again`);
    } catch (error) {
      warn(`coordinator: could not re-announce the lock table: ${errorMessage(error)}`);
    }
  };

  subscriptions.push(
    bus.subscribe(subjects.heartbeatAll(), (msg) => {
      try {
        const hb = decodeHeartbeat(subjects, msg.subject, msg.data);
        const outcome = membership.heartbeat(hb, clock.nowNs());
        events.heartbeat?.(outcome);
        if (NOTABLE.has(outcome)) logger.info(`member ${hb.role}/${hb.id} (node ${hb.node}, incarnation ${hb.incarnation}): ${outcome}`);
        // a switch seen for the first time, e.g. to open it to stamped lock packets at once
        if (outcome === 'joined' && hb.role === 'switch') for (const driver of drivers) driver.switchJoined?.({ id: hb.id, node: hb.node, incarnation: hb.incarnation });
        if (outcome === 'rejoined' || outcome === 'restarted') {
          const recovery = recoveries.rejoined(hb.role, hb.id, clock.nowNs());
          if (recovery?.doneAtNs !== undefined) logDone(recovery);
          // A restarted memory node has an empty (all-free) table and has forgotten which protocol it serves.
          if (hb.role === 'memory' && lastTable) republishTable(hb.id);
          if (hb.role === 'switch') for (const driver of drivers) driver.switchBack?.({ id: hb.id, node: hb.node, incarnation: hb.incarnation });
        } else if (outcome === 'identified') {
          // Declared dead before it was ever heard: the incarnation it names is the dead one, and
          // it may have acted since (queued at a switch): its notice and recoveries go out again.
          const member = membership.detector.member(hb.role, hb.id);
          if (member) beginRecovery(member, clock.nowNs(), 'expected member declared dead before it was ever heard; its first heartbeat names the incarnation that was declared');
        } else if (outcome === 'fenced' || outcome === 'table-full') warn(`member ${hb.role}/${hb.id} incarnation ${hb.incarnation}: heartbeat ignored (${outcome})`);
      } catch (decodeError) {
        malformed.record(msg.subject, decodeError);
      }
    }),
  );

  // Participants report on ctl.recovery.phase; our own notices echo back on ctl.recovery.failure.
  // Anything else under ctl.recovery, or bodies that do not decode, is malformed input.
  subscriptions.push(
    bus.subscribe(subjects.recoveryAll(), (msg) => {
      try {
        if (msg.subject === failureSubject) membership.observeEpoch(decodeWire(FailureNoticeSchema, msg.data, msg.subject).epoch);
        else if (msg.subject === phaseSubject) {
          const phase = decodeWire(RecoveryPhaseSchema, msg.data, msg.subject);
          events.recovery?.('phase-report');
          // Memory nodes report that they fenced a dead compute node and cleared its words.
          const recovery = phase.done ? recoveries.reported(phase.node, phase.protocol, phase.epoch, clock.nowNs()) : undefined;
          if (recovery?.doneAtNs !== undefined) logDone(recovery);
          logger.info(`recovery phase report about node ${phase.node} (protocol ${JSON.stringify(phase.protocol)}, epoch ${phase.epoch}, done ${phase.done}): ${phase.detail}`);
        } else if (msg.subject === tableSubject) {
          // Whoever initialised a lock table says which protocol it serves; memory nodes act on it.
          const order = decodeWire(ResetOrderSchema, msg.data, msg.subject);
          lastTable = msg.data;
          events.recovery?.('table');
          logger.info(`lock table now serves ${JSON.stringify(order.protocol)} (locks ${order.lockBegin}..${order.lockEnd})`);
        } else malformed.record(msg.subject, `no recovery subject ${msg.subject} (expected ${failureSubject}, ${phaseSubject} or ${tableSubject})`);
      } catch (decodeError) {
        malformed.record(msg.subject, decodeError);
      }
    }),
  );

  // A coordinator cut off from the bus hears nobody; it must not declare the cluster dead for that.
  const reconnectGraceNs = (deps.reconnectGraceMs ?? 1_000) * NS_PER_MS;
  const statusOff = bus.onStatus?.((status) => {
    if (status === 'disconnected') {
      membership.detector.excuseSilenceUntil(Number.POSITIVE_INFINITY);
      logger.warn('coordinator: control bus connection lost; failure detection is held until it is back');
    } else {
      membership.detector.excuseSilenceUntil(clock.nowNs() + reconnectGraceNs);
      logger.info(`coordinator: control bus connection back; members have ${reconnectGraceNs / NS_PER_MS} ms of grace to be heard`);
    }
  });
  if (statusOff) subscriptions.push(statusOff);

  // The view declaring the death is already out (Membership publishes inside tick), so its epoch fences the notice.
  const beginRecovery = (member: MemberRecord, nowNs: number, cause?: string) => {
    const recovery = recoveries.begin(member, epoch(), nowNs);
    events.recovery?.('begun');
    const reason = cause ?? `no heartbeat for ${silenceMs} ms (${deps.missesBeforeSuspect} missed intervals of ${deps.heartbeatIntervalMs} ms)`;
    logger.warn(`recovery #${recovery.seq}: ${member.role}/${member.id} (node ${member.node}, incarnation ${member.incarnation}) failed in epoch ${recovery.epoch}: ${reason}`);
    try {
      bus.publish(failureSubject, toBinary(FailureNoticeSchema, failureNoticeToWire(recovery, reason)));
    } catch (error) {
      warn(`coordinator: could not publish the failure notice of ${member.role}/${member.id}: ${errorMessage(error)}`);
    }
    if (recovery.doneAtNs !== undefined) logDone(recovery);
    if (member.role === 'compute') {
      for (const driver of drivers) driver.computeDead(member);
      queueLocks.computeDead(member);
    }
  };
  /** Declared dead by a recovery it could not take part in: the view, the notice and its recoveries, as for a silent member. */
  function declareComputeDead(node: number, reason: string): void {
    const found = membership.detector.members().find((m) => m.role === 'compute' && m.node === node && m.state !== 'dead');
    if (!found) return;
    const nowNs = clock.nowNs();
    const transition = membership.declareDead(found.role, found.id, nowNs);
    if (!transition) return;
    events.transition?.('dead');
    warn(`member ${found.role}/${found.id}: ${transition.from} -> dead (${reason})`);
    const member = membership.detector.member(found.role, found.id);
    if (member) beginRecovery(member, nowNs, reason);
  }
  const tick = () => {
    try {
      const nowNs = clock.nowNs();
      for (const t of membership.tick(nowNs)) {
        events.transition?.(t.to);
        warn(`member ${t.role}/${t.id}: ${t.from} -> ${t.to}`);
        const member = t.to === 'dead' ? membership.detector.member(t.role, t.id) : undefined;
        if (member) beginRecovery(member, nowNs);
      }
      for (const recovery of recoveries.tick(nowNs)) logDone(recovery);
    } catch (error) {
      warn(`coordinator: tick failed: ${errorMessage(error)}`);
    }
  };
  // Ticks at half an interval: a death is noticed at most half an interval after it is due.
  const tickNs = (deps.tickMs ?? Math.max(5, Math.floor(deps.heartbeatIntervalMs / 2))) * NS_PER_MS;
  void (async () => {
    while (!stop.signal.aborted) {
      await clock.sleep(tickNs, stop.signal);
      tick();
    }
  })().catch(() => undefined);

  let closed = false;
  return {
    membership,
    recoveries,
    drivers,
    queueLocks,
    close: () => {
      if (closed) return;
      closed = true;
      stop.abort();
      for (const driver of drivers) driver.close();
      queueLocks.close();
      for (const unsubscribe of subscriptions.splice(0)) unsubscribe();
    },
  };
}
