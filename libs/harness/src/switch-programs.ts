import { ConfigError } from '@lockfabric/ports';
import type { LockPacket } from '@lockfabric/ports';
import type { ProtocolDefinition, ProtocolOptions, SwitchProgramName } from '@lockfabric/locks-common';
import { SeededRandom } from '@lockfabric/sim';
import { forwardProgram } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';
import type { InMemoryCluster } from '@lockfabric/sim';
import type { InProcessPurge } from '@lockfabric/lock-netlock-control';
import { createKeyChooser } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';

/**
 * The switch program a protocol asks for. A protocol whose program lives in its own module
 * (FissLock, NetLock) builds it through `own` (its definition's `buildSwitchProgram`), given the
 * workload's lock count and a pre-run trace sampled from the same workload with its own seed;
 * `forward` comes from the switch model library.
 */
export function buildSwitchProgram(name: SwitchProgramName, spec: WorkloadSpec, protocolOptions?: ProtocolOptions, own?: ProtocolDefinition['buildSwitchProgram']): SwitchProgram {
  if (own) {
    const keys = createKeyChooser(spec, new SeededRandom((spec.seed ^ 0x5eed) >>> 0));
    const sampleLockTrace = (samples: number) => Array.from({ length: samples }, (_, i) => ({ lock: keys.next(), requester: String(i % spec.clients) }));
    return own({ options: protocolOptions ?? {}, workloadLocks: spec.locks, sampleLockTrace });
  }
  switch (name) {
    case 'forward':
      return forwardProgram();
    default:
      throw new ConfigError([`switch program ${name} is built by its protocol's module (pass its buildSwitchProgram)`]);
  }
}

/** A switch program whose control plane takes a dead machine's queue entries out (NetLock's has this). */
export interface PurgingSwitchProgram extends SwitchProgram {
  purgeMachine(machine: number): {
    readonly removed: number;
    readonly removedHolders: number;
    readonly locks: readonly number[];
    readonly grants: readonly LockPacket[];
    readonly wasFenced: boolean;
  };
}

/** Whether the run's switch program purges dead machines (asked of what it can do, not of its name). */
export function purgesMachines(program: SwitchProgram | undefined): program is PurgingSwitchProgram {
  return typeof (program as Partial<PurgingSwitchProgram> | undefined)?.purgeMachine === 'function';
}

/**
 * The purge as the sim's coordinator calls it: the switch model's purge (a control-plane register
 * rewrite, atomic between packets), whose grants leave through the switch's egress, as the
 * switch-dataplane's purge call does live.
 */
export function inProcessPurgeOf(program: PurgingSwitchProgram, cluster: Pick<InMemoryCluster, 'emitFromSwitch'>): InProcessPurge {
  return (machine) => {
    const result = program.purgeMachine(machine);
    for (const grant of result.grants) cluster.emitFromSwitch(grant.dst ?? grant.machine, grant);
    return { removed: result.removed, removedHolders: result.removedHolders, locks: result.locks, grants: result.grants.length, wasFenced: result.wasFenced };
  };
}
