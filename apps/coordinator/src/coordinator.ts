import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { MalformedInputCounter, RateLimitedLog } from '@lockfabric/live';
import type { Logger, Subjects } from '@lockfabric/live';
import type { Clock, Trace } from '@lockfabric/ports';
import type { RunningService } from '@lockfabric/service';
import { RealClock } from '@lockfabric/sim';
import { MetricsRegistry } from '@lockfabric/telemetry';
import { FailureNoticeSchema, MembershipViewSchema, RecoveryPhaseSchema, ResetOrderSchema, StatusResponseSchema, decodeWire } from '@lockfabric/wire';
import { startCoordinatorServer } from './coordinator-server.js';
import { lockAdminService } from './lock-admin/lock-admin-metrics.js';
import type { HeartbeatOutcome, MemberRecord, MemberState } from './failure-detector.js';
import { decodeHeartbeat } from './heartbeat-decoder.js';
import { Membership } from './membership.js';
import type { MembershipView, PublishReason } from './membership.js';
import { membershipViewToWire } from './view-wire.js';
import { RecoveryBook } from './recovery-book.js';
import type { Recovery } from './recovery-book.js';
import { failureNoticeToWire, recoveryToWire } from './recovery-wire.js';
import { startFissRecoveryHook } from './fisslock-recovery/fiss-recovery-hook.js';
import { startNetLockPurge } from './netlock-purge.js';
import { startQueueRecoveryHook } from './queue-lock-recovery/queue-recovery-hook.js';

export interface CoordinatorDeps {
  readonly nc: NatsConnection;
  readonly subjects: Subjects;
  readonly cluster: string;
  readonly heartbeatIntervalMs: number;
  readonly missesBeforeSuspect: number;
  /** CoordinatorService gRPC port; 0 picks a free one. */
  readonly grpcPort: number;
  readonly grpcHost?: string;
  readonly logger: Logger;
  /** The service's registry; a private one when omitted. */
  readonly metrics?: MetricsRegistry;
  /** Wall-based time (RealClock): epochs take their floor from it. */
  readonly clock?: Clock;
  readonly confirmAfterMs?: number;
  readonly warmupMs?: number;
  readonly announceIntervalMs?: number;
  readonly maxMembers?: number;
  /** Lease bounds per protocol for recovery bookkeeping, when the deployment's options differ from the defaults. */
  readonly leaseBoundsMs?: Readonly<Record<string, number>>;
  /** Finished recoveries kept for Status. */
  readonly keepRecoveries?: number;
  /**
   * After the coordinator's own NATS connection comes back, members get this long (plus the
   * suspicion timeout) to be heard again before anyone is suspected: they reconnect on their own
   * schedule. Default 1000 ms.
   */
  readonly reconnectGraceMs?: number;
  /** Spans of recoveries (FissLock: `recovery` with `recovery.S1|S2|S3`); none when omitted. */
  readonly trace?: Trace;
}

export interface Coordinator extends RunningService {
  readonly membership: Membership;
  readonly recoveries: RecoveryBook;
  readonly malformed: MalformedInputCounter;
  readonly grpcPort: number;
}

const NOTABLE: ReadonlySet<HeartbeatOutcome> = new Set(['joined', 'refuted', 'restarted', 'rejoined']);
const STATES: readonly MemberState[] = ['alive', 'suspect', 'dead'];

/**
 * The coordinator's membership service: heartbeats in from `hb.*.*`, failure detection on a timer,
 * views out on `ctl.membership` (a new epoch per change of the live set, the same view again every
 * announce interval), and `Status` over gRPC. Input that does not decode is counted and dropped.
 */
export async function startCoordinator(deps: CoordinatorDeps): Promise<Coordinator> {
  const { nc, subjects, logger } = deps;
  const clock = deps.clock ?? new RealClock();
  const malformed = new MalformedInputCounter({ logger, clock });
  const warnLog = new RateLimitedLog(logger, clock);
  const metrics = deps.metrics ?? new MetricsRegistry();
  const heartbeats = metrics.counter({ name: 'lockfabric_coordinator_heartbeats_total', help: 'Heartbeats received, by what they did', labelNames: ['outcome'] });
  const views = metrics.counter({ name: 'lockfabric_coordinator_views_published_total', help: 'Membership views published, by reason', labelNames: ['reason'] });
  const transitionsTotal = metrics.counter({ name: 'lockfabric_coordinator_member_transitions_total', help: 'Member state changes by failure detection', labelNames: ['to'] });
  const members = metrics.gauge({ name: 'lockfabric_coordinator_members', help: 'Members known to the coordinator, by state', labelNames: ['state'] });
  const decodeErrors = metrics.counter({ name: 'lockfabric_decode_errors_total', help: 'Malformed input dropped, by source', labelNames: ['source'] });
  const recoveryCount = metrics.counter({ name: 'lockfabric_coordinator_recoveries_total', help: 'Recoveries by what happened to them', labelNames: ['event'] });
  const stuckLocks = metrics.counter({ name: 'lockfabric_coordinator_fiss_stuck_total', help: 'FissLock stuck-lock reports (ctl.fiss.stuck), by what became of them: repair (an S1–S3 queued) or coalesced (covered by one)', labelNames: ['outcome'] });
  const seenStuck = { repairs: 0, coalesced: 0 };
  const seenDecodeErrors = new Map<string, number>();
  const recoveries = new RecoveryBook({
    ...(deps.leaseBoundsMs === undefined ? {} : { leaseBoundsMs: deps.leaseBoundsMs }),
    ...(deps.keepRecoveries === undefined ? {} : { keepDone: deps.keepRecoveries }),
  });
  const failureSubject = subjects.recovery('failure');
  const phaseSubject = subjects.recovery('phase');
  const tableSubject = subjects.recovery('table');
  const silenceMs = deps.heartbeatIntervalMs * deps.missesBeforeSuspect;
  const logDone = (recovery: Recovery) => {
    recoveryCount.inc({ event: 'done' });
    const tookMs = ((recovery.doneAtNs ?? recovery.detectedAtNs) - recovery.detectedAtNs) / 1e6;
    const unrecoverable = recovery.actions.filter((a) => a.mechanism === 'none').map((a) => a.protocol);
    logger.info(`recovery #${recovery.seq} of ${recovery.role}/${recovery.id} (epoch ${recovery.epoch}) done after ${tookMs.toFixed(1)} ms${unrecoverable.length ? `; no recovery by design for ${unrecoverable.join(', ')}` : ''}`);
  };

  const membershipSubject = subjects.membership();
  const publish = (view: MembershipView, reason: PublishReason) => {
    views.inc({ reason });
    if (reason === 'change') {
      const live = view.members.filter((m) => m.state !== 'dead').map((m) => `${m.role}/${m.id}#${m.incarnation}`);
      logger.info(`membership epoch ${view.epoch}: ${live.length} live [${live.join(', ')}]`);
    }
    try {
      nc.publish(membershipSubject, toBinary(MembershipViewSchema, membershipViewToWire(view)));
    } catch (error) {
      // The next change or announce carries the view again.
      warnLog.warn(`coordinator: could not publish the view of epoch ${view.epoch}: ${error instanceof Error ? error.message : String(error)}`);
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
    },
    clock.nowNs(),
    publish,
  );

  // Views from elsewhere (another coordinator, or our own echo) only ever raise the epoch.
  const viewSubscription: Subscription = nc.subscribe(membershipSubject, {
    callback: (error, msg) => {
      if (error) return warnLog.warn(`coordinator: subscription error on ${membershipSubject}: ${error.message}`);
      try {
        const epoch = decodeWire(MembershipViewSchema, msg.data, membershipSubject).epoch;
        if (epoch > membership.epochs.current) warnLog.warn(`coordinator: another coordinator published epoch ${epoch}; this one continues above it`);
        membership.observeEpoch(epoch);
      } catch (decodeError) {
        malformed.record(membershipSubject, decodeError);
      }
    },
  });
  // FissLock S1–S3 after a switch restart or a compute-node death (fisslock-recovery/)
  const fiss = startFissRecoveryHook({
    nc, subjects, logger, clock, recoveries, malformed,
    ...(deps.trace ? { trace: deps.trace } : {}),
    epoch: () => membership.view?.epoch ?? membership.epochs.current,
    liveComputeNodes: () => membership.detector.members().filter((m) => m.role === 'compute' && m.state === 'alive').map((m) => m.node),
    hasView: () => membership.view !== undefined,
    liveSwitches: () => membership.detector.members().filter((m) => m.role === 'switch' && m.state === 'alive').map((m) => m.node),
    // a compute node that cannot take part in S1–S3 is declared dead, so the recovery can go on without it
    declareDead: (node, reason) => declareComputeDead(node, reason),
  });
  // NetLock: a dead compute node's switch-queue entries purged, its late packets fenced (netlock-purge.ts)
  const netlockPurge = startNetLockPurge({ nc, subjects, logger, clock, recoveries, malformed });
  // mcs/alock: gate, drain, abort, table reset after a compute-node death (queue-lock-recovery/)
  const queueLocks = startQueueRecoveryHook({
    nc, subjects, logger, clock, recoveries,
    epoch: () => membership.view?.epoch ?? membership.epochs.current,
    liveComputeNodes: () => membership.detector.members().filter((m) => m.role === 'compute' && m.state === 'alive').map((m) => m.node),
  });
  let lastTable: Uint8Array | undefined;
  const republishTable = (memoryId: string) => {
    try {
      if (lastTable) nc.publish(tableSubject, lastTable);
      logger.info(`memory/${memoryId} restarted: its table is empty (free); lock table binding announced again`);
    } catch (error) {
      warnLog.warn(`coordinator: could not re-announce the lock table: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  const heartbeatSubscription: Subscription = nc.subscribe(subjects.heartbeatAll(), {
    callback: (error, msg) => {
      if (error) return warnLog.warn(`coordinator: heartbeat subscription error: ${error.message}`);
      try {
        const hb = decodeHeartbeat(subjects, msg.subject, msg.data);
        const outcome = membership.heartbeat(hb, clock.nowNs());
        heartbeats.inc({ outcome });
        if (NOTABLE.has(outcome)) logger.info(`member ${hb.role}/${hb.id} (node ${hb.node}, incarnation ${hb.incarnation}): ${outcome}`);
        // a switch seen for the first time is opened to stamped lock packets at once (fisslock-recovery/)
        if (outcome === 'joined' && hb.role === 'switch') fiss.switchJoined({ id: hb.id, node: hb.node, incarnation: hb.incarnation });
        if (outcome === 'rejoined' || outcome === 'restarted') {
          const recovery = recoveries.rejoined(hb.role, hb.id, clock.nowNs());
          if (recovery?.doneAtNs !== undefined) logDone(recovery);
          // A restarted memory node has an empty (all-free) table and has forgotten which protocol it serves.
          if (hb.role === 'memory' && lastTable) republishTable(hb.id);
          if (hb.role === 'switch') fiss.switchBack({ id: hb.id, node: hb.node, incarnation: hb.incarnation });
        }
        else if (outcome === 'fenced' || outcome === 'table-full') warnLog.warn(`member ${hb.role}/${hb.id} incarnation ${hb.incarnation}: heartbeat ignored (${outcome})`);
      } catch (decodeError) {
        malformed.record(msg.subject, decodeError);
      }
    },
  });

  // Participants report on ctl.recovery.phase; our own notices echo back on ctl.recovery.failure.
  // Anything else under ctl.recovery, or bodies that do not decode, is malformed input.
  const recoverySubscription: Subscription = nc.subscribe(subjects.recoveryAll(), {
    callback: (error, msg) => {
      if (error) return warnLog.warn(`coordinator: recovery subscription error: ${error.message}`);
      try {
        if (msg.subject === failureSubject) membership.observeEpoch(decodeWire(FailureNoticeSchema, msg.data, msg.subject).epoch);
        else if (msg.subject === phaseSubject) {
          const phase = decodeWire(RecoveryPhaseSchema, msg.data, msg.subject);
          recoveryCount.inc({ event: 'phase-report' });
          // Memory nodes report that they fenced a dead compute node and cleared its words.
          const recovery = phase.done ? recoveries.reported(phase.node, phase.protocol, phase.epoch, clock.nowNs()) : undefined;
          if (recovery?.doneAtNs !== undefined) logDone(recovery);
          logger.info(`recovery phase report about node ${phase.node} (protocol ${JSON.stringify(phase.protocol)}, epoch ${phase.epoch}, done ${phase.done}): ${phase.detail}`);
        } else if (msg.subject === tableSubject) {
          // Whoever initialised a lock table says which protocol it serves; memory nodes act on it.
          const order = decodeWire(ResetOrderSchema, msg.data, msg.subject);
          lastTable = msg.data;
          recoveryCount.inc({ event: 'table' });
          logger.info(`lock table now serves ${JSON.stringify(order.protocol)} (locks ${order.lockBegin}..${order.lockEnd})`);
        } else malformed.record(msg.subject, new Error(`no recovery subject ${msg.subject} (expected ${failureSubject}, ${phaseSubject} or ${tableSubject})`));
      } catch (decodeError) {
        malformed.record(msg.subject, decodeError);
      }
    },
  });

  // A coordinator cut off from NATS hears nobody; it must not declare the cluster dead for that.
  const reconnectGraceNs = (deps.reconnectGraceMs ?? 1_000) * 1e6;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        membership.detector.excuseSilenceUntil(Number.POSITIVE_INFINITY);
        logger.warn('coordinator: NATS connection lost; failure detection is held until it is back');
      } else if (status.type === 'reconnect') {
        membership.detector.excuseSilenceUntil(clock.nowNs() + reconnectGraceNs);
        logger.info(`coordinator: NATS connection back; members have ${reconnectGraceNs / 1e6} ms of grace to be heard`);
      }
    }
  })().catch(() => undefined);

  // Ticks at half an interval: a death is noticed at most half an interval after it is due.
  const tickMs = Math.max(5, Math.floor(deps.heartbeatIntervalMs / 2));
  // The view declaring the death is already out (Membership publishes inside tick), so its epoch fences the notice.
  const beginRecovery = (member: MemberRecord, nowNs: number, cause?: string) => {
    const epoch = membership.view?.epoch ?? membership.epochs.current;
    const recovery = recoveries.begin(member, epoch, nowNs);
    recoveryCount.inc({ event: 'begun' });
    const reason = cause ?? `no heartbeat for ${silenceMs} ms (${deps.missesBeforeSuspect} missed intervals of ${deps.heartbeatIntervalMs} ms)`;
    logger.warn(`recovery #${recovery.seq}: ${member.role}/${member.id} (node ${member.node}, incarnation ${member.incarnation}) failed in epoch ${epoch}: ${reason}`);
    try {
      nc.publish(failureSubject, toBinary(FailureNoticeSchema, failureNoticeToWire(recovery, reason)));
    } catch (error) {
      warnLog.warn(`coordinator: could not publish the failure notice of ${member.role}/${member.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (recovery.doneAtNs !== undefined) logDone(recovery);
    if (member.role === 'compute') fiss.computeDead(member);
    if (member.role === 'compute') netlockPurge.computeDead(member);
    if (member.role === 'compute') queueLocks.computeDead(member);
  };
  /** Declared dead by a recovery it could not take part in: the view, the notice and its recoveries, as for a silent member. */
  function declareComputeDead(node: number, reason: string): void {
    const found = membership.detector.members().find((m) => m.role === 'compute' && m.node === node && m.state !== 'dead');
    if (!found) return;
    const nowNs = clock.nowNs();
    const transition = membership.declareDead(found.role, found.id, nowNs);
    if (!transition) return;
    transitionsTotal.inc({ to: 'dead' });
    logger.warn(`member ${found.role}/${found.id}: ${transition.from} -> dead (${reason})`);
    const member = membership.detector.member(found.role, found.id);
    if (member) beginRecovery(member, nowNs, reason);
  }
  const ticker = setInterval(() => {
    try {
      const nowNs = clock.nowNs();
      for (const t of membership.tick(nowNs)) {
        transitionsTotal.inc({ to: t.to });
        logger.warn(`member ${t.role}/${t.id}: ${t.from} -> ${t.to}`);
        const member = t.to === 'dead' ? membership.detector.member(t.role, t.id) : undefined;
        if (member) beginRecovery(member, nowNs);
      }
      for (const recovery of recoveries.tick(nowNs)) logDone(recovery);
    } catch (error) {
      warnLog.warn(`coordinator: tick failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }, tickMs);

  const server = await startCoordinatorServer({
    port: deps.grpcPort,
    ...(deps.grpcHost === undefined ? {} : { host: deps.grpcHost }),
    malformed,
    services: [lockAdminService(metrics, { clock, logger, malformed }).grpcService()],
    status: () => create(StatusResponseSchema, { cluster: deps.cluster, view: membershipViewToWire(membership.snapshot(clock.nowNs())), recoveries: recoveries.all().flatMap(recoveryToWire) }),
  });
  await nc.flush();
  logger.info(`coordinator of cluster ${deps.cluster}: heartbeats every ${deps.heartbeatIntervalMs} ms, suspicion after ${membership.detector.suspectAfterMs} ms`);

  let closed = false;
  return {
    membership,
    recoveries,
    malformed,
    grpcPort: server.port,
    ready: () => !closed,
    endpoints: { grpc: server.port },
    collectMetrics: () => {
      const counts = new Map<MemberState, number>(STATES.map((state) => [state, 0]));
      for (const member of membership.detector.members()) counts.set(member.state, (counts.get(member.state) ?? 0) + 1);
      for (const [state, n] of counts) members.set({ state }, n);
      stuckLocks.inc({ outcome: 'repair' }, fiss.stuck.repairs - seenStuck.repairs);
      stuckLocks.inc({ outcome: 'coalesced' }, fiss.stuck.coalesced - seenStuck.coalesced);
      Object.assign(seenStuck, { repairs: fiss.stuck.repairs, coalesced: fiss.stuck.coalesced });
      for (const [source, total] of Object.entries(malformed.bySource())) {
        decodeErrors.inc({ source }, total - (seenDecodeErrors.get(source) ?? 0));
        seenDecodeErrors.set(source, total);
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      clearInterval(ticker);
      fiss.close();
      netlockPurge.close();
      queueLocks.close();
      heartbeatSubscription.unsubscribe();
      recoverySubscription.unsubscribe();
      viewSubscription.unsubscribe();
      await server.close();
    },
  };
}
