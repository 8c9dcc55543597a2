import { create } from '@bufbuild/protobuf';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { NetLockNotInUseError } from '@lockfabric/control';
import type { NetLockPurgePort, PurgeCall } from '@lockfabric/control';
import { GrpcCallError, UnaryClient } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, PurgeNetLockMachineRequestSchema, SwitchControlService } from '@lockfabric/wire';

/**
 * The switch purge port live: asks the running switch program to drop a dead machine's entries
 * (SwitchControl.PurgeNetLockMachine, the RPC's wire name) over gRPC, one client per switch
 * address, kept open. Which protocols need it is the control plane's business, not this class's. The channel is connected when the address is announced (one Describe), so
 * the purge after a death does not pay a TCP and HTTP/2 handshake on a loaded machine. NOT_FOUND
 * (the switch runs a program without queues to purge) becomes NetLockNotInUseError.
 */
export class GrpcSwitchPurge implements NetLockPurgePort {
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
