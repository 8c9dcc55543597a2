import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, NodeId } from '@lockfabric/ports';
import { FailureNoticeSchema, HeartbeatSchema, MemberState, MembershipViewSchema, decodeWire } from '@lockfabric/wire';
import type { ControlBus, Unsubscribe } from './bus.js';
import { startHeartbeatSender } from './heartbeat-sender.js';
import type { HeartbeatPublisher } from './heartbeat-sender.js';
import type { Logger, MalformedSink } from './logger.js';
import type { Subjects } from './subjects.js';
import { RejoinPolicy } from './rejoin-policy.js';
import type { RejoinDecision, ViewEntry } from './rejoin-policy.js';

const STATE: Record<number, ViewEntry['state']> = { [MemberState.ALIVE]: 'alive', [MemberState.SUSPECT]: 'suspect', [MemberState.DEAD]: 'dead' };

export interface RejoinWatchDeps {
  readonly bus: ControlBus;
  /** Schedules the new incarnation's heartbeats. */
  readonly clock: Clock;
  readonly subjects: Subjects;
  readonly node: NodeId;
  readonly heartbeatIntervalMs: number;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
  /**
   * Ends everything the dead incarnation was doing: aborts its runs, refuses its clients' further
   * verbs, waits for those in flight, drops protocol state. Resolves when the node may rejoin.
   */
  readonly retire: (reason: string) => Promise<void>;
  /** Wall clock (ms) for new incarnations; incarnations are start times, as the service's own. Default: `clock` in ms. */
  readonly nowMs?: () => number;
}

export interface RejoinWatch {
  /** The incarnation this node heartbeats with now (undefined until its first heartbeat was seen). */
  readonly incarnation: () => bigint | undefined;
  /** Rejoins so far. */
  readonly rejoins: () => number;
  close(): void;
}

/**
 * Rejoin after a false suspicion, in process: the node watches membership views and failure
 * notices; when they declare its own incarnation dead while it runs (RejoinPolicy), it retires
 * that incarnation and heartbeats under a new, higher one, which the coordinator takes as a
 * `rejoined` member and memory nodes as a reason to lift the fence.
 *
 * The service's own heartbeat (libs/service) keeps beating with the first incarnation, which the
 * coordinator ignores as `stale` once a higher one is known; that service is not this app's to
 * change, so the node learns its first incarnation by listening to its own heartbeat subject.
 */
export function startRejoinWatch(deps: RejoinWatchDeps): RejoinWatch {
  const { bus, subjects, node, logger, malformed, clock } = deps;
  const nowMs = deps.nowMs ?? (() => Math.floor(clock.nowNs() / NS_PER_MS));
  const policy = new RejoinPolicy(node);
  let heartbeat: HeartbeatPublisher | undefined;
  let rejoining = false;
  let rejoins = 0;
  let closed = false;

  const rejoin = async (reason: string): Promise<void> => {
    const old = policy.current;
    logger.warn(`compute node ${node}: declared dead while running (${reason}); retiring incarnation ${String(old)} and rejoining`);
    try {
      await deps.retire(reason);
    } catch (error) {
      logger.warn(`compute node ${node}: retiring incarnation ${String(old)} failed (${describe(error)}); rejoining anyway`);
    }
    if (closed) return; // the node is shutting down: nothing to rejoin
    const next = BigInt(Math.max(nowMs(), Number(old ?? 0n) + 1));
    heartbeat?.stop();
    policy.rejoined(next);
    heartbeat = startHeartbeatSender({ bus, subjects, clock, role: 'compute', id: String(node), node, incarnation: next, intervalMs: deps.heartbeatIntervalMs, logger });
    rejoins++;
    logger.info(`compute node ${node}: rejoined as incarnation ${next} (was ${String(old)})`);
  };
  const act = (decision: RejoinDecision): void => {
    if (!decision.rejoin || rejoining) return;
    rejoining = true;
    void rejoin(decision.reason)
      .catch((error: unknown) => logger.error(`compute node ${node}: rejoin failed: ${describe(error)}`))
      .finally(() => {
        rejoining = false;
      });
  };

  const ownHeartbeats = subjects.heartbeat('compute', String(node));
  const membership = subjects.membership();
  const failures = subjects.recovery('failure');
  const subscriptions: Unsubscribe[] = [
    bus.subscribe(ownHeartbeats, (msg) => {
      if (policy.current !== undefined) return;
      try {
        policy.learn(decodeWire(HeartbeatSchema, msg.data, ownHeartbeats).incarnation);
      } catch (decodeError) {
        malformed.record(ownHeartbeats, decodeError);
      }
    }),
    bus.subscribe(membership, (msg) => {
      let decision: RejoinDecision;
      try {
        const view = decodeWire(MembershipViewSchema, msg.data, membership);
        decision = policy.view(
          view.epoch,
          view.members.map((m) => ({ role: m.role, node: m.node, incarnation: m.incarnation, state: STATE[m.state] ?? 'alive' })),
        );
      } catch (decodeError) {
        malformed.record(membership, decodeError);
        return;
      }
      act(decision);
    }),
    bus.subscribe(failures, (msg) => {
      let decision: RejoinDecision;
      try {
        const notice = decodeWire(FailureNoticeSchema, msg.data, failures);
        decision = policy.failure(notice.epoch, notice.role, notice.node, notice.incarnation);
      } catch (decodeError) {
        malformed.record(failures, decodeError);
        return;
      }
      act(decision);
    }),
  ];

  return {
    incarnation: () => policy.current,
    rejoins: () => rejoins,
    close: () => {
      closed = true;
      heartbeat?.stop();
      for (const unsubscribe of subscriptions) unsubscribe();
    },
  };
}

function describe(error: unknown): string {
  return errorMessage(error);
}
