import { create, toBinary } from '@bufbuild/protobuf';
import type { FissPolicy, MachineOrders, ServerReport, FissParticipant } from '@lockfabric/lock-fisslock';
import { LockFabricError, errorMessage } from '@lockfabric/ports';
import type { LockId, NodeId } from '@lockfabric/ports';
import { FissRecoveryReplySchema, FissRecoveryRequestSchema, decodeWire } from '@lockfabric/wire';
import type { FissRecoveryReply } from '@lockfabric/wire';
import type { ControlBus, Subjects } from '@lockfabric/control';
import { FissWireError, machineOrdersToWire, serverReportFromWire } from './recovery-codec.js';
import { FISS_SUBJECTS } from './subjects.js';

/** S1–S3 calls, and `lock-report`: one lock's state read without pausing (a stalled-queue suspicion's confirmation). */
export type FissVerb = 'pause' | 'report' | 'apply' | 'resume' | 'lock-report';

const POLICIES: readonly FissPolicy[] = ['read-preferring', 'starvation-prevention', 'write-preferring'];

/** A compute node refused a recovery call, or did not answer in time. */
export class FissCallError extends LockFabricError {
  readonly code = 'FISS_RECOVERY_CALL';
  constructor(
    readonly machine: NodeId,
    readonly verb: FissVerb,
    detail: string,
  ) {
    super(`fisslock recovery: ${verb} on compute node ${machine}: ${detail}`);
  }
}

/**
 * One compute node as the coordinator drives it by request/reply on the control bus, subject
 * `ctl.fiss.<machine>.<verb>` (control.proto, FissRecoveryRequest → FissRecoveryReply): NATS
 * live, the in-memory bus in sim.
 * `pause` answers `false` when the node runs no FissLock agent pool; the pool's policy is kept.
 */
export class BusFissParticipant implements FissParticipant {
  policy: FissPolicy | undefined;

  constructor(
    private readonly bus: ControlBus,
    private readonly subjects: Subjects,
    readonly machine: NodeId,
    private readonly timeoutMs: number,
  ) {}

  async pause(epoch: bigint): Promise<boolean> {
    const reply = await this.call('pause', epoch);
    if (!reply.active) return false;
    this.policy = POLICIES.find((p) => p === reply.policy) ?? 'read-preferring';
    return true;
  }

  async report(epoch: bigint): Promise<ServerReport> {
    return this.readReport('report', await this.call('report', epoch));
  }

  async apply(epoch: bigint, orders: MachineOrders): Promise<void> {
    await this.call('apply', epoch, orders);
  }

  async resume(epoch: bigint): Promise<void> {
    await this.call('resume', epoch);
  }

  async lockReport(epoch: bigint, lock: LockId): Promise<ServerReport | undefined> {
    const reply = await this.call('lock-report', epoch, undefined, lock);
    return reply.active ? this.readReport('lock-report', reply) : undefined;
  }

  private readReport(verb: FissVerb, reply: FissRecoveryReply): ServerReport {
    if (!reply.report) throw new FissCallError(this.machine, verb, 'the reply carries no report');
    const report = serverReportFromWire(reply.report, this.subjects.recoveryCall(FISS_SUBJECTS, this.machine, verb));
    if (report.machine !== this.machine) throw new FissCallError(this.machine, verb, `the report is of machine ${report.machine}`);
    return report;
  }

  private async call(verb: FissVerb, epoch: bigint, orders?: MachineOrders, lock?: LockId): Promise<FissRecoveryReply> {
    const subject = this.subjects.recoveryCall(FISS_SUBJECTS, this.machine, verb);
    const request = create(FissRecoveryRequestSchema, { epoch, ...(orders ? { orders: machineOrdersToWire(orders) } : {}), ...(lock === undefined ? {} : { lock }) });
    let data: Uint8Array;
    try {
      data = await this.bus.request(subject, toBinary(FissRecoveryRequestSchema, request), { timeoutMs: this.timeoutMs });
    } catch (error) {
      throw new FissCallError(this.machine, verb, `no answer within ${this.timeoutMs} ms (${errorMessage(error)})`);
    }
    let reply: FissRecoveryReply;
    try {
      reply = decodeWire(FissRecoveryReplySchema, data, subject);
    } catch (error) {
      throw new FissWireError(subject, errorMessage(error));
    }
    if (reply.error) throw new FissCallError(this.machine, verb, reply.error);
    return reply;
  }
}
