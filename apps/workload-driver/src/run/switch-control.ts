import { create } from '@bufbuild/protobuf';
import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { SwitchProgramAbsentError } from '@lockfabric/control';
import type { SwitchControlCaller } from '@lockfabric/control';
import { GrpcCallError, UnaryClient } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, ResetSwitchRequestSchema, SwitchControlService } from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import { LockFabricError } from '@lockfabric/ports';

/** The coordinator did not open the switch to stamped packets in time (no membership view reached it). */
export class SwitchAdmissionTimeoutError extends LockFabricError {
  readonly code = 'SWITCH_ADMISSION_TIMEOUT';
}

/**
 * The driver's side of SwitchControlService: reset between runs, decisions, and (as a
 * SwitchControlCaller) a program's own calls, such as the queue install the catalog plans.
 */
export class SwitchControlClient implements SwitchControlCaller {
  private readonly client: UnaryClient;

  constructor(
    readonly address: string,
    deadlineMs = 30_000,
  ) {
    this.client = new UnaryClient(address, deadlineMs);
  }

  async reset(): Promise<void> {
    await this.client.call(SwitchControlService.method.reset, create(ResetSwitchRequestSchema));
  }

  /** A call the running program serves; NOT_FOUND (it serves no such call) is SwitchProgramAbsentError. */
  async call<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, request: MessageShape<I>): Promise<MessageShape<O>> {
    try {
      return await this.client.call(method, request);
    } catch (error) {
      if (error instanceof GrpcCallError && error.status === GrpcStatus.NOT_FOUND) throw new SwitchProgramAbsentError(this.address, method.name, error.details);
      throw error;
    }
  }

  describe(): Promise<DescribeSwitchResponse> {
    return this.client.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema));
  }

  close(): void {
    this.client.close();
  }
}
