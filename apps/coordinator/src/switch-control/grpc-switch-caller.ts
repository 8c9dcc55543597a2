import { create } from '@bufbuild/protobuf';
import type { DescMessage, DescMethodUnary, MessageShape } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { SwitchProgramAbsentError } from '@lockfabric/control';
import type { SwitchControlCaller } from '@lockfabric/control';
import { GrpcCallError, UnaryClient } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, SwitchControlService } from '@lockfabric/wire';

/**
 * One switch's SwitchControl service over gRPC, for a protocol's own calls (which ones is the
 * protocol's business, reached through the catalog's plug-ins). `warm` connects the channel with
 * one Describe when the address is announced, so a call after a death does not pay a TCP and
 * HTTP/2 handshake on a loaded machine. NOT_FOUND (the running program does not serve the call)
 * becomes SwitchProgramAbsentError.
 */
export class GrpcSwitchCaller implements SwitchControlCaller {
  private readonly client: UnaryClient;

  constructor(
    readonly address: string,
    timeoutMs = 2_000,
  ) {
    this.client = new UnaryClient(address, timeoutMs);
  }

  warm(): void {
    this.client.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema)).catch(() => undefined);
  }

  async call<I extends DescMessage, O extends DescMessage>(method: DescMethodUnary<I, O>, request: MessageShape<I>): Promise<MessageShape<O>> {
    try {
      return await this.client.call(method, request);
    } catch (error) {
      if (error instanceof GrpcCallError && error.status === GrpcStatus.NOT_FOUND) throw new SwitchProgramAbsentError(this.address, method.name, error.details);
      throw error;
    }
  }

  close(): void {
    this.client.close();
  }
}
