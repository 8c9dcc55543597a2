import { create, toBinary } from '@bufbuild/protobuf';
import { existingQueueRecoveryGroup, zeroLockTable } from '@lockfabric/locks-common';
import type { QueueRecoveryGroup } from '@lockfabric/locks-common';
import { NS_PER_MS, errorMessage } from '@lockfabric/ports';
import type { Clock, LockTableLayout, NodeId, Verbs } from '@lockfabric/ports';
import { QueueRecoveryReplySchema, QueueRecoveryRequestSchema, decodeWire } from '@lockfabric/wire';
import type { QueueRecoveryRequest } from '@lockfabric/wire';
import type { BusMessage, ControlBus, Unsubscribe } from '../bus.js';
import type { Logger, MalformedSink } from '../logger.js';
import type { Subjects } from '../subjects.js';
import { queueRecoverySubject } from './bus-queue-participant.js';
import type { QueueRecoveryVerb } from './bus-queue-participant.js';

const VERBS: readonly QueueRecoveryVerb[] = ['gate', 'abort', 'reset', 'resume'];

/** What the responder needs of the node's current run: its protocol and lock table. */
export interface QueueRun {
  readonly protocol: string;
  readonly locks: LockTableLayout;
}

export interface QueueResponderDeps {
  readonly bus: ControlBus;
  readonly subjects: Subjects;
  /** Runs the gate's lease (live: RealClock; sim: the virtual clock). */
  readonly clock: Clock;
  readonly node: NodeId;
  /** The running (or lingering) run of this node. */
  readonly run: () => QueueRun | undefined;
  /** Verbs of this node (for the table reset), through its queue pairs to the memory nodes. */
  readonly verbs: Verbs;
  readonly logger: Logger;
  readonly malformed: MalformedSink;
}

export interface QueueResponder {
  readonly answered: Readonly<Record<QueueRecoveryVerb, number>>;
  close(): void;
}

interface ReplyFields {
  readonly active?: boolean;
  readonly error?: string;
  readonly protocol?: string;
  readonly done?: boolean;
  readonly aborted?: number;
  readonly holding?: number;
  readonly busy?: number;
  readonly resetBytes?: bigint;
}

/**
 * The compute node's side of queue-lock recovery, answering on the control bus (NATS live, the
 * in-memory bus in sim) (README of libs/locks/mcs, "Failures"). The node takes part when its run
 * has a queue-recovery group here: a protocol that takes part hands its clients the group in its
 * definition (mcs, alock); one that does not gives them none (rma-rw's writer queue), so no
 * protocol is named here.
 * - gate: new acquires of the group stop joining queues (they wait within their own timeout); the
 *   gate opens by itself after the request's lease, so a coordinator that dies mid-recovery cannot
 *   stall the node; reply says whether the node has such clients, and the run's protocol;
 * - abort: if nothing is held or in flight on the node, its waiters end with LockAbortedError and
 *   free their queue nodes (done); else not done, with the counts;
 * - reset: the lock table of the run is zeroed through this node's queue pairs;
 * - resume: the gate opens.
 * Calls are fenced by epoch: an older one than the newest seen is refused.
 */
export function startQueueRecoveryResponder(deps: QueueResponderDeps): QueueResponder {
  const { bus, node, logger, clock } = deps;
  let newestEpoch = 0n;
  let group: QueueRecoveryGroup | undefined;
  let lease: AbortController | undefined;
  const answered: Record<QueueRecoveryVerb, number> = { gate: 0, abort: 0, reset: 0, resume: 0 };

  const openGate = (why: string): void => {
    lease?.abort();
    lease = undefined;
    if (group?.gated) logger.info(`queue-lock recovery epoch ${newestEpoch}: gate open (${why})`);
    group?.open();
  };

  const reply = (msg: BusMessage, fields: ReplyFields): void => {
    try {
      msg.respond?.(toBinary(QueueRecoveryReplySchema, create(QueueRecoveryReplySchema, { machine: node, epoch: newestEpoch, ...fields })));
    } catch (error) {
      logger.warn(`queue-lock recovery: could not answer on ${msg.subject}: ${errorMessage(error)}`);
    }
  };

  const handle = async (verb: QueueRecoveryVerb, request: QueueRecoveryRequest, msg: BusMessage): Promise<void> => {
    if (request.epoch < newestEpoch) return reply(msg, { error: `epoch ${request.epoch} is older than ${newestEpoch}` });
    newestEpoch = request.epoch;
    answered[verb]++;
    const run = deps.run();
    switch (verb) {
      case 'gate': {
        const found = run ? existingQueueRecoveryGroup(run.locks, node) : undefined;
        if (!found || !run) return reply(msg, { active: false });
        const { protocol } = run;
        if (group && group !== found) group.open();
        group = found;
        group.gate(request.deadNodes);
        lease?.abort();
        const leaseMs = request.gateLeaseMs > 0 ? request.gateLeaseMs : 10_000;
        const mine = (lease = new AbortController());
        clock.sleep(leaseMs * NS_PER_MS, mine.signal).then(
          () => openGate(`lease of ${leaseMs} ms over without resume`),
          () => undefined,
        );
        logger.info(`queue-lock recovery epoch ${request.epoch}: ${protocol} gated (dead compute nodes ${request.deadNodes.join(', ')})`);
        return reply(msg, { active: true, protocol });
      }
      case 'abort': {
        if (!group?.gated) return reply(msg, { error: `abort in epoch ${newestEpoch} without a closed gate: gate first` });
        const outcome = group.tryAbort(`compute node(s) declared dead; queue-lock recovery of epoch ${request.epoch} aborted this wait`);
        if (outcome.done && outcome.aborted > 0) logger.info(`queue-lock recovery epoch ${request.epoch}: aborted ${outcome.aborted} waiting acquire(s)`);
        return reply(msg, outcome.done ? { active: true, done: true, aborted: outcome.aborted } : { active: true, done: false, holding: outcome.holding, busy: outcome.busy });
      }
      case 'reset': {
        if (!group?.gated || !run) return reply(msg, { error: `reset in epoch ${newestEpoch} without a closed gate: gate first` });
        const bytes = await zeroLockTable(deps.verbs, run.locks);
        logger.info(`queue-lock recovery epoch ${request.epoch}: ${run.protocol} lock table reset (${bytes} bytes zeroed)`);
        return reply(msg, { active: true, resetBytes: BigInt(bytes) });
      }
      case 'resume':
        openGate('resume');
        return reply(msg, { active: group !== undefined });
    }
  };

  const subscriptions: Unsubscribe[] = VERBS.map((verb) => {
    const subject = queueRecoverySubject(deps.subjects, node, verb);
    return bus.subscribe(subject, (msg) => {
      let request: QueueRecoveryRequest;
      try {
        request = decodeWire(QueueRecoveryRequestSchema, msg.data, subject);
      } catch (decodeError) {
        deps.malformed.record(subject, decodeError);
        return reply(msg, { error: `malformed request: ${errorMessage(decodeError)}` });
      }
      handle(verb, request, msg).catch((failure: unknown) => reply(msg, { error: errorMessage(failure) }));
    });
  });

  return {
    answered,
    close: () => {
      for (const unsubscribe of subscriptions) unsubscribe();
      openGate('node closing');
    },
  };
}
