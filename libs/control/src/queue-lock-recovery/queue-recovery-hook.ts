import { runQueueLockRecovery } from '@lockfabric/locks-common';
import type { QueueRecoveryRun } from '@lockfabric/locks-common';
import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import { QueueRecoveryNoResetterError } from '../errors.js';
import type { DriverContext } from '../driver-context.js';
import { BusQueueParticipant } from './bus-queue-participant.js';

export interface QueueRecoveryHookDeps extends Omit<DriverContext, 'malformed'> {
  /**
   * The protocols whose `driven` compute action in the book this recovery closes: those whose rule
   * names it (recovery-rules.ts `queueLockProtocols`). Default none.
   */
  readonly protocols?: readonly string[];
  /** The membership epoch now: every call carries it. */
  readonly epoch: () => bigint;
  /** Compute nodes the failure detector holds alive. */
  readonly liveComputeNodes: () => readonly NodeId[];
  /**
   * Nodes beside the compute nodes that host queue-lock clients and answer the recovery calls:
   * the memory nodes where ALock's local cohort runs (ALock §3: clients co-located with the lock
   * table). They are gated, drained and aborted like compute nodes, or a reset would free a tail
   * under their holders. Default none.
   */
  readonly queueHosts?: () => readonly NodeId[];
  /** Per call. Default 2000 ms. */
  readonly callTimeoutMs?: number;
  /** A gated node opens by itself this long after the gate call. Default 20 000 ms. */
  readonly gateLeaseMs?: number;
  /** Between drain rounds. Default 20 ms. */
  readonly drainPollMs?: number;
}

export interface DeadCompute {
  readonly id: string;
  readonly node: NodeId;
}

export interface QueueRecoveryHook {
  computeDead(member: DeadCompute): void;
  /**
   * This coordinator started with no memory of its predecessor, which may have crashed in the
   * middle of a queue-lock recovery: survivors gated (until their lease), waiters aborted or not,
   * the table not reset, queues still naming a dead node that nobody will declare dead again (a
   * restarted coordinator never heard it). One recovery with no newly dead node repairs every
   * queue all the same: gate, drain, abort, reset, resume (the groups remember the dead nodes an
   * earlier gate named). With no node running a queue lock it is one round of gate calls.
   */
  afterRestart(): void;
  /** Recoveries that ran (a node took part), in order. */
  readonly completed: readonly QueueRecoveryRun[];
  idle(): Promise<void>;
  close(): void;
}

const MAX_ATTEMPTS = 2;

/**
 * The coordinator's queue-lock recovery after a compute node's death, one for every protocol that
 * takes part (the rule names it; the clients join their node's queue-recovery group): gate every
 * surviving compute node, abort in rounds until every survivor has no holder and has aborted its
 * waiters, have one survivor zero the lock table, resume (libs/locks/common queue-recovery.ts has
 * the rule and why it is safe). Recoveries run one at a time; one that fails (a node did not
 * answer) is tried once more from the gate. With no node running a queue lock nothing happens
 * beyond one round of gate calls.
 */
export function startQueueRecoveryHook(deps: QueueRecoveryHookDeps): QueueRecoveryHook {
  const { logger } = deps;
  const callTimeoutMs = deps.callTimeoutMs ?? 2_000;
  const gateLeaseMs = deps.gateLeaseMs ?? 20_000;
  const drainPollMs = deps.drainPollMs ?? 20;
  const protocols = deps.protocols ?? [];
  const completed: QueueRecoveryRun[] = [];
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  const stop = new AbortController();

  const record = (member: DeadCompute | undefined): void => {
    if (!member) return; // a restart recovery: no member's recovery to record it under
    for (const protocol of protocols) deps.recoveries.recordSteps('compute', member.id, protocol, [], deps.clock.nowNs());
  };

  /** `member` undefined: the recovery after this coordinator's (re)start, with no newly dead node. */
  const run = async (member: DeadCompute | undefined, attempt: number): Promise<void> => {
    if (closed) return;
    const epoch = deps.epoch();
    const label = member ? `compute/${member.id}` : 'a coordinator restart';
    const participants = [...deps.liveComputeNodes(), ...(deps.queueHosts?.() ?? [])]
      .filter((n) => n !== member?.node)
      .map((n) => new BusQueueParticipant(deps.bus, deps.subjects, n, callTimeoutMs, gateLeaseMs));
    try {
      const result = await runQueueLockRecovery({
        epoch,
        participants,
        deadNodes: member ? [member.node] : [],
        resetTable: async () => {
          const resetter = participants.find((p) => p.protocol !== undefined);
          if (!resetter) throw new QueueRecoveryNoResetterError(epoch);
          await resetter.reset(epoch);
        },
        nowNs: () => deps.clock.nowNs(),
        pause: () => deps.clock.sleep(drainPollMs * NS_PER_MS, stop.signal).catch(() => undefined),
        // the drain ends, and the reset starts, within half the gate lease (a call takes at most callTimeoutMs more)
        maxDrainRounds: Math.ceil(gateLeaseMs / 2 / drainPollMs),
        resetWithinNs: (gateLeaseMs / 2 - callTimeoutMs) * 1e6,
      });
      if (result.machines.length === 0) {
        logger.info(`queue-lock recovery after ${label}: no survivor runs a queue lock; nothing to do`);
      } else {
        completed.push(result);
        const protocol = participants.find((p) => p.protocol !== undefined)?.protocol ?? '?';
        const timings = result.steps.map((s) => `${s.stage} ${((s.endNs - s.startNs) / 1e6).toFixed(1)} ms${s.detail ? ` (${s.detail})` : ''}`).join(', ');
        const outcome = result.reset ? 'queues reset' : 'NOT reset (survivors kept holding); queues behind the dead node stay blocked';
        logger.info(`queue-lock recovery (${protocol}) after ${label}, epoch ${epoch}, machines [${result.machines.join(', ')}]: ${outcome}; ${timings}`);
      }
      record(member);
    } catch (error) {
      logger.warn(`queue-lock recovery after ${label} (attempt ${attempt}/${MAX_ATTEMPTS}) failed: ${errorMessage(error)}`);
      if (attempt < MAX_ATTEMPTS && !closed) return run(member, attempt + 1);
      record(member);
    }
  };

  return {
    computeDead: (member) => {
      queue = queue.then(() => run(member, 1)).catch(() => undefined);
    },
    afterRestart: () => {
      queue = queue.then(() => run(undefined, 1)).catch(() => undefined);
    },
    completed,
    idle: () => queue,
    close: () => {
      closed = true;
      stop.abort();
    },
  };
}
