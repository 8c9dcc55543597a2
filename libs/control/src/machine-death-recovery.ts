import { create, toBinary } from '@bufbuild/protobuf';
import type { NodeId } from '@lockfabric/ports';
import { FissSwitchAnnounceSchema } from '@lockfabric/wire';
import type { DriverContext } from './driver-context.js';

/** A compute node the failure detector declared dead, as a machine-death recovery sees it. */
export interface DeadCompute {
  readonly id: string;
  readonly node: NodeId;
  readonly incarnation: bigint;
}

/**
 * A switch program's recovery after a compute machine's death, contributed by a protocol's control
 * package through the catalog's coordinator plug-ins (NetLock's queue purge is one): a recovery
 * driver that hears no switch events and needs only the DriverContext, in the same list
 * (ControlPlaneDeps.recoveryDrivers). The control plane only tells it of each death and closes it;
 * which switch program it talks to, over which port, and which recovery action it closes in the
 * book are its own business.
 */
export interface MachineDeathRecovery {
  /** A compute node was declared dead (once per node incarnation from the control plane). */
  computeDead(member: DeadCompute): void;
  close(): void;
}

export type MachineDeathRecoveryFactory = (context: DriverContext) => MachineDeathRecovery;

/** The switch's announcement of its control address (`ctl.switch`), as a switch-dataplane publishes it. */
export function switchAnnouncement(controlAddress: string, rack = 0): Uint8Array {
  return toBinary(FissSwitchAnnounceSchema, create(FissSwitchAnnounceSchema, { rack, controlAddress }));
}
