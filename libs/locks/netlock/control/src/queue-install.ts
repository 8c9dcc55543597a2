import { create } from '@bufbuild/protobuf';
import type { SwitchControlCaller } from '@lockfabric/control';
import type { QueueSlots } from './queue-slots.js';
import { InstallNetLockQueuesRequestSchema, SwitchControlService } from '@lockfabric/wire';

/** What the switch reports after an install: hot locks with a queue and the slots they take. */
export interface InstalledQueues {
  readonly hotLocks: number;
  readonly slots: number;
}

/**
 * Installs a run's hot-lock queues (the knapsack allocation of a profiled pre-run trace) on a live
 * switch before the run: SwitchControl.InstallNetLockQueues, which replaces any earlier allocation.
 */
export async function installNetLockQueues(caller: SwitchControlCaller, queues: readonly QueueSlots[]): Promise<InstalledQueues> {
  const request = create(InstallNetLockQueuesRequestSchema, { queues: queues.map((q) => ({ lock: q.lock, base: q.base, size: q.size })) });
  const response = await caller.call(SwitchControlService.method.installNetLockQueues, request);
  return { hotLocks: response.hotLocks, slots: response.slots };
}
