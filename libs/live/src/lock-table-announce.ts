import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { ResetOrderSchema } from '@lockfabric/wire';
import type { Subjects } from './subjects.js';

/**
 * Tells the memory nodes (and the coordinator's log) which protocol the lock table serves from now
 * on, for locks `[0, lockCount)`: a `ResetOrder` on `ctl.recovery.table`. Whoever zeroes the table
 * for a run publishes it right after, so that after a compute-node failure a memory node knows
 * which words name a dead holder (caslock, drtm). Without it a memory node still fences the dead
 * node, but clears nothing.
 */
export async function announceLockTable(nc: NatsConnection, subjects: Subjects, protocol: string, lockCount: number): Promise<void> {
  nc.publish(subjects.recovery('table'), toBinary(ResetOrderSchema, create(ResetOrderSchema, { protocol, lockBegin: 0, lockEnd: lockCount })));
  await nc.flush();
}
