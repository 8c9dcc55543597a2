import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { FissSwitchAnnounceSchema, ResetOrderSchema } from '@lockfabric/wire';
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

/**
 * Tells the coordinator where a rack's SwitchControlService listens, so the control plane (and
 * any protocol's recovery plug-in, e.g. FissLock's S3 register rewrite) can reach that switch.
 * switch-dataplane repeats it every second, so a restarted coordinator learns it again. The
 * message keeps its wire name (`FissSwitchAnnounce`) from when only FissLock read it.
 */
export async function announceSwitchControl(nc: NatsConnection, subjects: Subjects, rack: number, controlAddress: string): Promise<void> {
  nc.publish(subjects.switchAnnounce(), toBinary(FissSwitchAnnounceSchema, create(FissSwitchAnnounceSchema, { rack, controlAddress })));
  await nc.flush();
}
