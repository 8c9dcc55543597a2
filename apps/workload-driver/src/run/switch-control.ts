import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { DescMessage, DescMethod, MessageShape } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { rawMethodOf } from '@lockfabric/live';
import {
  DescribeSwitchRequestSchema,
  DescribeSwitchResponseSchema,
  InstallNetLockQueuesRequestSchema,
  InstallNetLockQueuesResponseSchema,
  ResetSwitchRequestSchema,
  ResetSwitchResponseSchema,
  SwitchControlService,
} from '@lockfabric/wire';
import type { DescribeSwitchResponse } from '@lockfabric/wire';

/** A hot lock's queue as the driver installs it: slots [base, base + size). */
export interface NetLockQueueSpec {
  readonly lock: number;
  readonly base: number;
  readonly size: number;
}

/** The driver's side of SwitchControlService: reset between runs, NetLock's allocation, decisions. */
export class SwitchControlClient {
  private readonly client: Client;

  constructor(
    readonly address: string,
    private readonly deadlineMs = 30_000,
  ) {
    this.client = new Client(address, credentials.createInsecure());
  }

  async reset(): Promise<void> {
    await this.call(SwitchControlService.method.reset, ResetSwitchRequestSchema, create(ResetSwitchRequestSchema), ResetSwitchResponseSchema);
  }

  async installNetLockQueues(queues: readonly NetLockQueueSpec[]): Promise<{ hotLocks: number; slots: number }> {
    const request = create(InstallNetLockQueuesRequestSchema, { queues: queues.map((q) => ({ lock: q.lock, base: q.base, size: q.size })) });
    const response = await this.call(SwitchControlService.method.installNetLockQueues, InstallNetLockQueuesRequestSchema, request, InstallNetLockQueuesResponseSchema);
    return { hotLocks: response.hotLocks, slots: response.slots };
  }

  describe(): Promise<DescribeSwitchResponse> {
    return this.call(SwitchControlService.method.describe, DescribeSwitchRequestSchema, create(DescribeSwitchRequestSchema), DescribeSwitchResponseSchema);
  }

  close(): void {
    this.client.close();
  }

  private call<I extends DescMessage, O extends DescMessage>(method: DescMethod, input: I, request: MessageShape<I>, output: O): Promise<MessageShape<O>> {
    const raw = rawMethodOf(method);
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(
        raw.path,
        raw.requestSerialize,
        raw.responseDeserialize,
        toBinary(input, request),
        { deadline: Date.now() + this.deadlineMs },
        (error: ServiceError | null, response?: Uint8Array) => {
          if (error) reject(new Error(`switch control ${method.name} at ${this.address}: ${error.details || error.message}`));
          else resolve(fromBinary(output, response ?? new Uint8Array()));
        },
      );
    });
  }
}
