import { create } from '@bufbuild/protobuf';
import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { SwitchProgramAbsentError } from '@lockfabric/control';
import type { SwitchControlCaller } from '@lockfabric/control';
import { DescribeSwitchRequestSchema, ResetSwitchRequestSchema, SwitchControlService } from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import { GrpcCallError, UnaryClient } from './grpc-unary.js';

/**
 * The one gRPC client of a switch's SwitchControl service: the driver's reset and describe between
 * runs, and (as a SwitchControlCaller) a program's own calls, which the coordinator's recovery
 * plug-ins and the driver's queue install pick. TLS comes from the process's settings, as for every
 * UnaryClient. A failed call is a GrpcCallError (GRPC_CALL) naming the address and the method,
 * except NOT_FOUND on a program's call, which is SwitchProgramAbsentError (SWITCH_PROGRAM_ABSENT).
 */
export class SwitchControlClient implements SwitchControlCaller {
  private readonly client: UnaryClient;

  /** `deadlineMs` per call: the driver waits up to 30 s; the coordinator's recoveries pass 2 s. */
  constructor(
    readonly address: string,
    deadlineMs = 30_000,
  ) {
    this.client = new UnaryClient(address, deadlineMs);
  }

  /** Connects the channel with one Describe, so a call after a death does not pay the TCP and HTTP/2 handshake. */
  warm(): void {
    this.describe().catch(() => undefined);
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

  /** Every register back to its initial value, between runs. */
  async reset(): Promise<void> {
    await this.client.call(SwitchControlService.method.reset, create(ResetSwitchRequestSchema));
  }

  close(): void {
    this.client.close();
  }
}
