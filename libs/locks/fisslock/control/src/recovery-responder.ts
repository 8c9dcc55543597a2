import { create, toBinary } from '@bufbuild/protobuf';
import type { BusMessage, ControlBus, Logger, MalformedSink, Subjects, Unsubscribe } from '@lockfabric/control';
import type { FissPolicy, MachineRecovery, GatedSwitchPort } from '@lockfabric/lock-fisslock';
import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, NodeId } from '@lockfabric/ports';
import { FissRecoveryReplySchema, FissRecoveryRequestSchema, decodeWire } from '@lockfabric/wire';
import type { FissRecoveryRequest, FissServerReport } from '@lockfabric/wire';
import type { FissVerb } from './bus-participant.js';
import { machineOrdersFromWire, serverReportToWire } from './recovery-codec.js';
import { FISS_SUBJECTS } from './subjects.js';

/** What recovery uses of an agent pool: its machine's recovery steps (machineRecovery, which also pauses the clients). */
export type RecoveryPool = Pick<MachineRecovery, 'pauseForRecovery' | 'recoveryReport' | 'applyRecovery'> & Partial<Pick<MachineRecovery, 'releaseClients' | 'lockReport'>>;

export interface FissPoolHandle {
  readonly pool: RecoveryPool;
  readonly policy: FissPolicy;
}

export interface FissResponderDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  /** Runs the pause limit (live: RealClock; sim: the virtual clock). */
  readonly clock: Clock;
  readonly node: NodeId;
  /** This node's FissLock agent pool now, if it runs one. */
  readonly pool: () => FissPoolHandle | undefined;
  /** This machine's switch link, which recovery holds closed between S2 and the end of S3. */
  readonly gate: GatedSwitchPort;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
  /** Told the epoch of every recovery call not older than the newest (the node's packets carry it). */
  readonly onEpoch?: (epoch: bigint) => void;
  /** How long clients may be held between pause and apply; default {@link DEFAULT_PAUSE_LIMIT_MS} (above the coordinator's 3 attempts). */
  readonly pauseLimitMs?: number;
}

type Phase = 'idle' | 'paused' | 'applied';

/** A pause not followed by its orders within this long is taken as abandoned: clients go on (they time out with typed errors). */
export const DEFAULT_PAUSE_LIMIT_MS = 15_000;

interface ReplyFields {
  readonly active?: boolean;
  readonly error?: string;
  readonly policy?: string;
  readonly report?: FissServerReport;
}

export interface FissResponder {
  /** Recovery calls answered, by verb. */
  readonly answered: Readonly<Record<FissVerb, number>>;
  readonly phase: Phase;
  close(): void;
}

const VERBS: readonly FissVerb[] = ['pause', 'report', 'apply', 'resume', 'lock-report'];

/**
 * The compute node's side of FissLock recovery (FissLock §7.2), on the control bus (NATS live, the
 * in-memory bus in sim): answers the coordinator's `ctl.fiss.<node>.<verb>` requests on this
 * node's agent pool.
 * - pause (S1): the pool stops sending (its retransmission buffer is dropped); the reply says
 *   whether this node runs FissLock and with which policy.
 * - report (S1): the gate closes (nothing reaches the switch, nothing from it is taken: a packet
 *   processed after the report would be undone by S2's orders, which are built from it), then the
 *   pool's agents and its clients' requests.
 * - apply (S2): anything held from before S2 is dropped (the old link's world), the pool installs
 *   its orders, wakes granted tasks and aborts dropped requests with LockAbortedError.
 * - resume (after S3): the gate opens; what the pool sent meanwhile goes out.
 * - lock-report (no recovery): one lock's agents and client records, read without pausing or
 *   closing anything, so the coordinator can confirm a stalled-queue suspicion before it repairs.
 * Calls are fenced by epoch: one older than the newest seen is refused, and each S1–S3 verb must
 * follow its predecessor within one epoch (a repeated call is answered again, harmlessly); a
 * lock-report changes neither the epoch nor the phase.
 */
export function startFissRecoveryResponder(deps: FissResponderDeps): FissResponder {
  const { bus, subjects, node, logger } = deps;
  const pauseLimitMs = deps.pauseLimitMs ?? DEFAULT_PAUSE_LIMIT_MS;
  let newestEpoch = 0n;
  let phase: Phase = 'idle';
  let pool: RecoveryPool | undefined;
  const answered: Record<FissVerb, number> = { pause: 0, report: 0, apply: 0, resume: 0, 'lock-report': 0 };
  let pauseTimer: AbortController | undefined;
  const stopPauseTimer = (): void => {
    pauseTimer?.abort();
    pauseTimer = undefined;
  };
  const startPauseTimer = (held: RecoveryPool): void => {
    stopPauseTimer();
    const timer = (pauseTimer = new AbortController());
    deps.clock.sleep(pauseLimitMs * NS_PER_MS, timer.signal).then(
      () => {
        if (pauseTimer !== timer) return;
        pauseTimer = undefined;
        if (phase !== 'paused' || pool !== held) return;
        held.releaseClients?.();
        logger.warn(`fisslock recovery epoch ${newestEpoch}: no orders within ${pauseLimitMs} ms of the pause; clients go on (the pool stays paused until a recovery applies)`);
      },
      () => undefined,
    );
  };

  const reply = (msg: BusMessage, fields: ReplyFields): void => {
    try {
      msg.respond?.(toBinary(FissRecoveryReplySchema, create(FissRecoveryReplySchema, { machine: node, epoch: newestEpoch, ...fields })));
    } catch (error) {
      logger.warn(`fisslock recovery: could not answer on ${msg.subject}: ${errorMessage(error)}`);
    }
  };

  /** Read-only: a stale coordinator is refused, a newer epoch is not taken up (no recovery began). */
  const lockReport = (request: FissRecoveryRequest, msg: BusMessage): void => {
    if (request.epoch < newestEpoch) return reply(msg, { error: `epoch ${request.epoch} is older than ${newestEpoch}` });
    answered['lock-report']++;
    const found = deps.pool();
    if (!found) return reply(msg, { active: false });
    if (!found.pool.lockReport) return reply(msg, { error: 'this agent pool cannot report one lock' });
    return reply(msg, { active: true, report: serverReportToWire(found.pool.lockReport(request.lock)) });
  };

  const handle = (verb: FissVerb, request: FissRecoveryRequest, msg: BusMessage): void => {
    if (verb === 'lock-report') return lockReport(request, msg);
    if (request.epoch < newestEpoch) return reply(msg, { error: `epoch ${request.epoch} is older than ${newestEpoch}` });
    const fresh = request.epoch > newestEpoch;
    newestEpoch = request.epoch;
    deps.onEpoch?.(request.epoch);
    answered[verb]++;
    switch (verb) {
      case 'pause': {
        const found = deps.pool();
        if (!found) return reply(msg, { active: false });
        if (fresh || phase !== 'paused' || pool !== found.pool) {
          // a pause of a new recovery supersedes an unfinished one: the gate opens again, the pool's state is reported afresh
          deps.gate.open();
          pool = found.pool;
          pool.pauseForRecovery();
          phase = 'paused';
          logger.info(`fisslock recovery epoch ${request.epoch}: paused (S1)`);
          startPauseTimer(pool);
        }
        return reply(msg, { active: true, policy: found.policy });
      }
      case 'report':
        if (phase !== 'paused' || !pool || fresh) return reply(msg, { error: `report in phase ${phase} of epoch ${newestEpoch}: pause first` });
        deps.gate.close();
        return reply(msg, { active: true, report: serverReportToWire(pool.recoveryReport()) });
      case 'apply': {
        if (!pool || fresh || phase === 'idle') return reply(msg, { error: `apply in phase ${phase} of epoch ${newestEpoch}: pause first` });
        if (phase === 'applied') return reply(msg, { active: true });
        if (!request.orders || request.orders.machine !== node) return reply(msg, { error: 'apply carries no orders for this machine' });
        const orders = machineOrdersFromWire(request.orders, msg.subject);
        deps.gate.close();
        const stale = deps.gate.discardHeld();
        stopPauseTimer();
        pool.applyRecovery(orders);
        phase = 'applied';
        logger.info(`fisslock recovery epoch ${request.epoch}: applied (S2) — ${orders.agents.length} agents, ${orders.wake.length} woken, ${orders.abort.length} aborted${stale > 0 ? `, ${stale} stale packets dropped` : ''}`);
        return reply(msg, { active: true });
      }
      case 'resume': {
        if (phase !== 'applied' || fresh) return reply(msg, { active: pool !== undefined, ...(phase === 'idle' ? {} : { error: `resume in phase ${phase}: apply first` }) });
        const sent = deps.gate.open();
        phase = 'idle';
        logger.info(`fisslock recovery epoch ${request.epoch}: resumed after S3 (${sent} held packets sent)`);
        return reply(msg, { active: true });
      }
    }
  };

  const subscriptions: Unsubscribe[] = VERBS.map((verb) => {
    const subject = subjects.recoveryCall(FISS_SUBJECTS, node, verb);
    return bus.subscribe(subject, (msg) => {
      let request: FissRecoveryRequest;
      try {
        request = decodeWire(FissRecoveryRequestSchema, msg.data, subject);
      } catch (decodeError) {
        deps.malformed.record(subject, decodeError);
        return reply(msg, { error: `malformed request: ${errorMessage(decodeError)}` });
      }
      try {
        handle(verb, request, msg);
      } catch (failure) {
        deps.malformed.record(subject, failure);
        reply(msg, { error: errorMessage(failure) });
      }
    });
  });

  return {
    answered,
    get phase() {
      return phase;
    },
    close: () => {
      stopPauseTimer();
      for (const unsubscribe of subscriptions) unsubscribe();
      deps.gate.open();
    },
  };
}
