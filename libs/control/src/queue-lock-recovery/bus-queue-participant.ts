import { create, toBinary } from '@bufbuild/protobuf';
import type { AbortOutcome, QueueRecoveryParticipant } from '@lockfabric/locks-common';
import { LockFabricError, errorMessage } from '@lockfabric/ports';
import type { NodeId } from '@lockfabric/ports';
import { QueueRecoveryReplySchema, QueueRecoveryRequestSchema, decodeWire } from '@lockfabric/wire';
import type { QueueRecoveryReply } from '@lockfabric/wire';
import type { ControlBus } from '../bus.js';
import type { Subjects } from '../subjects.js';

export type QueueRecoveryVerb = 'gate' | 'abort' | 'reset' | 'resume';

/** The subject family of queue-lock recovery calls: `ctl.queue.<machine>.<verb>`. */
export const QUEUE_RECOVERY_FAMILY = 'queue';

/** Where a host's queue-recovery responder listens: one of its recovery calls (subjects.ts). */
export function queueRecoverySubject(subjects: Subjects, machine: NodeId, verb: QueueRecoveryVerb): string {
  return subjects.recoveryCall(QUEUE_RECOVERY_FAMILY, machine, verb);
}

/** A compute node refused a queue-lock recovery call, or did not answer in time. */
export class QueueRecoveryCallError extends LockFabricError {
  readonly code = 'QUEUE_RECOVERY_CALL';
  constructor(
    readonly machine: NodeId,
    readonly verb: QueueRecoveryVerb,
    detail: string,
  ) {
    super(`queue-lock recovery: ${verb} on compute node ${machine}: ${detail}`);
  }
}

/** One compute node as the coordinator drives it by request/reply on the control bus (control.proto, "Queue-lock recovery"). */
export class BusQueueParticipant implements QueueRecoveryParticipant {
  /** The node's protocol, learnt from its gate reply. */
  protocol: string | undefined;

  constructor(
    private readonly bus: ControlBus,
    private readonly subjects: Subjects,
    readonly machine: NodeId,
    private readonly timeoutMs: number,
    private readonly gateLeaseMs: number,
  ) {}

  async gate(epoch: bigint, deadNodes: readonly NodeId[]): Promise<boolean> {
    const reply = await this.call('gate', epoch, deadNodes);
    if (reply.active) this.protocol = reply.protocol;
    return reply.active;
  }

  async tryAbort(epoch: bigint): Promise<AbortOutcome> {
    const reply = await this.call('abort', epoch);
    return reply.done ? { done: true, aborted: reply.aborted } : { done: false, holding: reply.holding, busy: reply.busy };
  }

  /** Zeroes the run's lock table through this node's queue pairs; returns the bytes written. */
  async reset(epoch: bigint): Promise<bigint> {
    return (await this.call('reset', epoch)).resetBytes;
  }

  async resume(epoch: bigint): Promise<void> {
    await this.call('resume', epoch);
  }

  private async call(verb: QueueRecoveryVerb, epoch: bigint, deadNodes: readonly NodeId[] = []): Promise<QueueRecoveryReply> {
    const subject = queueRecoverySubject(this.subjects, this.machine, verb);
    const request = create(QueueRecoveryRequestSchema, { epoch, deadNodes: [...deadNodes], gateLeaseMs: this.gateLeaseMs });
    let data: Uint8Array;
    try {
      data = await this.bus.request(subject, toBinary(QueueRecoveryRequestSchema, request), { timeoutMs: this.timeoutMs });
    } catch (error) {
      throw new QueueRecoveryCallError(this.machine, verb, `no answer within ${this.timeoutMs} ms (${errorMessage(error)})`);
    }
    let reply: QueueRecoveryReply;
    try {
      reply = decodeWire(QueueRecoveryReplySchema, data, subject);
    } catch (error) {
      throw new QueueRecoveryCallError(this.machine, verb, `malformed reply: ${errorMessage(error)}`);
    }
    if (reply.error) throw new QueueRecoveryCallError(this.machine, verb, reply.error);
    if (reply.machine !== this.machine) throw new QueueRecoveryCallError(this.machine, verb, `the reply is from machine ${reply.machine}`);
    return reply;
  }
}
