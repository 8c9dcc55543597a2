import { create } from '@bufbuild/protobuf';
import { UnaryClient } from '@lockfabric/live';
import { DescribeSwitchRequestSchema, InstallNetLockQueuesRequestSchema, ResetSwitchRequestSchema, SwitchControlService } from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';
import { LockFabricError } from '@lockfabric/ports';

/** The coordinator did not open the switch to stamped packets in time (no membership view reached it). */
export class SwitchAdmissionTimeoutError extends LockFabricError {
  readonly code = 'SWITCH_ADMISSION_TIMEOUT';
}

/** A hot lock's queue as the driver installs it: slots [base, base + size). */
export interface NetLockQueueSpec {
  readonly lock: number;
  readonly base: number;
  readonly size: number;
}

/** The driver's side of SwitchControlService: reset between runs, NetLock's allocation, decisions. */
export class SwitchControlClient {
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

  async installNetLockQueues(queues: readonly NetLockQueueSpec[]): Promise<{ hotLocks: number; slots: number }> {
    const request = create(InstallNetLockQueuesRequestSchema, { queues: queues.map((q) => ({ lock: q.lock, base: q.base, size: q.size })) });
    const response = await this.client.call(SwitchControlService.method.installNetLockQueues, request);
    return { hotLocks: response.hotLocks, slots: response.slots };
  }

  describe(): Promise<DescribeSwitchResponse> {
    return this.client.call(SwitchControlService.method.describe, create(DescribeSwitchRequestSchema));
  }

  close(): void {
    this.client.close();
  }
}
