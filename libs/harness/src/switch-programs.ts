import { ConfigError } from '@lockfabric/ports';
import type { LockPacket } from '@lockfabric/ports';
import type { ProtocolDefinition, ProtocolOptions, SwitchProgramName } from '@lockfabric/locks-common';
import { SeededRandom } from '@lockfabric/sim';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS, FISSLOCK_POLICIES, fissLockDecider, forwardProgram, lockCapacity } from '@lockfabric/switch';
import type { FissLockDeciderOptions, FissLockPolicy, SwitchProgram } from '@lockfabric/switch';
import type { InMemoryCluster } from '@lockfabric/sim';
import type { InProcessPurge } from '@lockfabric/control';
import { createKeyChooser } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';

/** Locks the decider holds at least: small tables still spread over the decider's MAUs (each split array needs a part per stage). */
const MIN_DECIDER_LOCKS = 1_024;

/**
 * The decider options a FissLock run needs so that switch and clients agree: the clients' grant
 * policy, and as lock count their `switchCapacity` (the id from which they go to the fallback lock
 * managers), or without one every lock of the workload up to the switch's capacity — which is what
 * the clients assume then (`min(lock count, DEFAULT_SWITCH_CAPACITY)`). The two options are read
 * here from the run's strings, not through the FissLock library's reader: the harness may not depend
 * on a protocol library (lock libraries' tests use the harness, and FissLock depends on SrvLock and
 * ParLock for its fallback). The clients read the same strings and reject what they reject.
 */
export function fissLockDeciderOptions(spec: WorkloadSpec, protocolOptions: ProtocolOptions = {}): FissLockDeciderOptions {
  const policyText = String(protocolOptions['policy'] ?? 'read-preferring');
  if (!(FISSLOCK_POLICIES as readonly string[]).includes(policyText)) throw new ConfigError([`fisslock: policy must be one of ${FISSLOCK_POLICIES.join(', ')}, got ${JSON.stringify(policyText)}`]);
  const capacityText = protocolOptions['switchCapacity'] ?? '0';
  const switchCapacity = Number(capacityText);
  if (!Number.isInteger(switchCapacity) || switchCapacity < 0) throw new ConfigError([`fisslock: switchCapacity must be an integer ≥ 0, got ${JSON.stringify(capacityText)}`]);
  const capacity = lockCapacity(DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS);
  if (switchCapacity > capacity) {
    throw new ConfigError([`fisslock: switchCapacity ${switchCapacity} exceeds what the switch holds (${capacity} locks, MAU formula); the clients would send ids the decider cannot keep`]);
  }
  const mutant = protocolOptions['mutantNoIncaBound'];
  return {
    policy: policyText as FissLockPolicy,
    lockCount: switchCapacity > 0 ? switchCapacity : Math.min(Math.max(spec.locks, MIN_DECIDER_LOCKS), capacity),
    ...(mutant === true || mutant === 'true' ? { mutantNoIncaBound: true } : {}),
  };
}

/**
 * The switch program a protocol asks for. A protocol whose program lives in its own module
 * (NetLock) builds it through `own` (its definition's `buildSwitchProgram`), given a pre-run trace
 * sampled from the same workload with its own seed; the others come from the switch model library
 * with the run's protocol options.
 */
export function buildSwitchProgram(name: SwitchProgramName, spec: WorkloadSpec, protocolOptions?: ProtocolOptions, own?: ProtocolDefinition['buildSwitchProgram']): SwitchProgram {
  if (own) {
    const keys = createKeyChooser(spec, new SeededRandom((spec.seed ^ 0x5eed) >>> 0));
    const sampleLockTrace = (samples: number) => Array.from({ length: samples }, (_, i) => ({ lock: keys.next(), requester: String(i % spec.clients) }));
    return own({ options: protocolOptions ?? {}, sampleLockTrace });
  }
  switch (name) {
    case 'forward':
      return forwardProgram();
    case 'fisslock':
      return fissLockDecider(fissLockDeciderOptions(spec, protocolOptions));
    default:
      throw new ConfigError([`switch program ${name} is built by its protocol's module (pass its buildSwitchProgram)`]);
  }
}

/** The part of NetLock's switch program the sim's coordinator drives (a dead machine's purge). */
export interface PurgingSwitchProgram extends SwitchProgram {
  purgeMachine(machine: number): {
    readonly removed: number;
    readonly removedHolders: number;
    readonly locks: readonly number[];
    readonly grants: readonly LockPacket[];
    readonly wasFenced: boolean;
  };
}

/** Whether a run's switch program is NetLock's (whose dead machines the coordinator purges). */
export function isNetLockProgram(program: SwitchProgram | undefined): program is PurgingSwitchProgram {
  return program !== undefined && program.name === 'netlock' && 'purgeMachine' in program;
}

/**
 * The NetLock purge as the sim's coordinator calls it: the switch model's purge (a control-plane
 * register rewrite, atomic between packets), whose grants leave through the switch's egress, as
 * the switch-dataplane's PurgeNetLockMachine does live.
 */
export function netlockPurgeOf(program: PurgingSwitchProgram, cluster: Pick<InMemoryCluster, 'emitFromSwitch'>): InProcessPurge {
  return (machine) => {
    const result = program.purgeMachine(machine);
    for (const grant of result.grants) cluster.emitFromSwitch(grant.dst ?? grant.machine, grant);
    return { removed: result.removed, removedHolders: result.removedHolders, locks: result.locks, grants: result.grants.length, wasFenced: result.wasFenced };
  };
}
