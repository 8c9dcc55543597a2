import { ConfigError } from '@lockfabric/ports';
import type { ProtocolOptions, SwitchProgramInput } from '@lockfabric/locks-common';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS } from '@lockfabric/switch';
import { lockCapacity } from './capacity.js';
import { FISSLOCK_POLICIES, fissLockDecider } from './decider.js';
import type { FissLockDecider, FissLockDeciderOptions, FissLockPolicy } from './decider.js';

/** Locks the decider holds at least: small tables still spread over the decider's MAUs (each split array needs a part per stage). */
const MIN_DECIDER_LOCKS = 1_024;

/**
 * The decider options a simulated FissLock run needs so that switch and clients agree: the clients'
 * grant policy, and as lock count their `switchCapacity` (the id from which they go to the fallback
 * lock managers), or without one every lock of the workload up to the switch's capacity — which is
 * what the clients assume then (`min(lock count, DEFAULT_SWITCH_CAPACITY)`). The clients read the
 * same strings and reject what they reject.
 */
export function fissLockDeciderOptions(workloadLocks: number, protocolOptions: ProtocolOptions = {}): FissLockDeciderOptions {
  const policyText = String(protocolOptions['policy'] ?? 'read-preferring');
  if (!(FISSLOCK_POLICIES as readonly string[]).includes(policyText)) throw new ConfigError([`fisslock: policy must be one of ${FISSLOCK_POLICIES.join(', ')}, got ${JSON.stringify(policyText)}`]);
  const capacityText = protocolOptions['switchCapacity'] ?? '0';
  const switchCapacity = Number(capacityText);
  if (!Number.isInteger(switchCapacity) || switchCapacity < 0) throw new ConfigError([`fisslock: switchCapacity must be an integer ≥ 0, got ${JSON.stringify(capacityText)}`]);
  const capacity = lockCapacity(DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS);
  if (switchCapacity > capacity) {
    throw new ConfigError([`fisslock: switchCapacity ${switchCapacity} exceeds what the switch holds (${capacity} locks, MAU formula); the clients would send ids the decider cannot keep`]);
  }
  const on = (key: string): boolean => protocolOptions[key] === true || protocolOptions[key] === 'true';
  return {
    policy: policyText as FissLockPolicy,
    lockCount: switchCapacity > 0 ? switchCapacity : Math.min(Math.max(workloadLocks, MIN_DECIDER_LOCKS), capacity),
    ...(on('mutantNoIncaBound') ? { mutantNoIncaBound: true } : {}),
    ...(on('mutantSilentStaleCopy') ? { mutantSilentStaleCopy: true } : {}),
  };
}

/** FissLock's `buildSwitchProgram`: the decider of a simulated run, fitted to its workload and options. */
export function buildFissLockSwitchProgram(input: SwitchProgramInput): FissLockDecider {
  return fissLockDecider(fissLockDeciderOptions(input.workloadLocks, input.options));
}
