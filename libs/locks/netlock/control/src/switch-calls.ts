import { create } from '@bufbuild/protobuf';
import type { Logger } from '@lockfabric/control';
import { MalformedInputError } from '@lockfabric/ports';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import { InstallNetLockQueuesResponseSchema, PurgeNetLockMachineResponseSchema } from '@lockfabric/wire';
import type { QueueSlots } from './queue-slots.js';
import type { InstallNetLockQueuesRequest, InstallNetLockQueuesResponse, PurgeNetLockMachineRequest, PurgeNetLockMachineResponse } from '@lockfabric/wire';

export interface NetLockSwitchCallsDeps {
  /** The loaded NetLock program (its queue install and purge). */
  readonly program: NetLockProgramControl;
  /** Sends a packet the control plane made (the purge's grants) out of the switch port of `machine`. */
  readonly emit: (machine: NodeId, packet: LockPacket) => void;
  readonly logger: Logger;
}


/**
 * The calls of NetLock's switch program these handlers make (its NetLockProgram has them). Written
 * here rather than imported so this package does not depend on lock-netlock: the harness depends
 * on this package, and lock-netlock's tests on the harness.
 */
export interface NetLockProgramControl {
  install(allocation: readonly QueueSlots[]): void;
  purgeMachine(machine: number): {
    readonly removed: number;
    readonly removedHolders: number;
    readonly locks: readonly number[];
    readonly grants: readonly LockPacket[];
    readonly wasFenced: boolean;
  };
  readonly maxMachines: number;
}

/** NetLock's own SwitchControl calls, served by a switch-dataplane running the NetLock program. */
export interface NetLockSwitchCalls {
  installNetLockQueues(request: InstallNetLockQueuesRequest): InstallNetLockQueuesResponse;
  purgeNetLockMachine(request: PurgeNetLockMachineRequest): PurgeNetLockMachineResponse;
}

/**
 * The switch side of NetLock's control: install a run's hot-lock queues, and purge a dead machine
 * (fence it, take its entries out of every queue, send the grants that frees).
 */
export function netlockSwitchCalls(deps: NetLockSwitchCallsDeps): NetLockSwitchCalls {
  const { program, emit, logger } = deps;
  return {
    installNetLockQueues: (request) => {
      const queues = request.queues.map((q) => ({ lock: q.lock, base: q.base, size: q.size }));
      program.install(queues);
      const slots = queues.reduce((sum, q) => sum + q.size, 0);
      logger.info(`netlock: ${queues.length} hot-lock queue(s) installed over gRPC (${slots} slots)`);
      return create(InstallNetLockQueuesResponseSchema, { hotLocks: queues.length, slots });
    },
    purgeNetLockMachine: (request) => {
      if (request.machine >= program.maxMachines) {
        throw new MalformedInputError('grpc SwitchControlService.PurgeNetLockMachine', `machine ${request.machine} is outside [0, ${program.maxMachines})`);
      }
      // One synchronous turn of the event loop, like a packet: no packet is processed half-way
      // through the rewrite, and the grants leave before any later packet's egress.
      const result = program.purgeMachine(request.machine);
      for (const grant of result.grants) emit(grant.dst ?? grant.machine, grant);
      logger.info(
        `netlock: purged machine ${request.machine}${result.wasFenced ? ' (already fenced)' : ''}: ${result.removed} queue entr${result.removed === 1 ? 'y' : 'ies'} (${result.removedHolders} holding) on ${result.locks.length} hot lock(s), ${result.grants.length} grant(s) sent`,
      );
      return create(PurgeNetLockMachineResponseSchema, { removed: result.removed, removedHolders: result.removedHolders, locks: [...result.locks], grants: result.grants.length, wasFenced: result.wasFenced });
    },
  };
}
