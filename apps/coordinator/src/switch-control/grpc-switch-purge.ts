import { create } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { NetLockNotInUseError } from '@lockfabric/control';
import type { NetLockPurgePort, PurgeCall } from '@lockfabric/control';
import { GrpcCallError, UnaryClient } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, PurgeNetLockMachineRequestSchema, SwitchControlService } from '@lockfabric/wire';

/**
 * The NetLock purge port live: SwitchControl.PurgeNetLockMachine over gRPC, one client per switch
 * address, kept open. The channel is connected when the address is announced (one Describe), so
 * the purge after a death does not pay a TCP and HTTP/2 handshake on a loaded machine. NOT_FOUND
 * (the switch runs another program) becomes NetLockNotInUseError.
 */
export class GrpcNetLockPurge implements NetLockPurgePort {
  private client: UnaryClient | undefined;

  constructor(private readonly timeoutMs = 2_000) {}

  /** A (new) switch address: replace the client and connect it in the background. */
  warm(address: string): void {
    if (this.client?.address === address) return;
    this.client?.close();
    this.client = new UnaryClient(address, this.timeoutMs);
    this.client.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema)).catch(() => undefined);
  }

  readonly purge: PurgeCall = async (address, machine) => {
    this.warm(address);
    try {
      return await (this.client as UnaryClient).call(SwitchControlService.method.purgeNetLockMachine, create(PurgeNetLockMachineRequestSchema, { machine }));
    } catch (error) {
      if (error instanceof GrpcCallError && error.status === GrpcStatus.NOT_FOUND) throw new NetLockNotInUseError(address, error.details);
      throw error;
    }
  };

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}
