import { ConfigError } from '@lockfabric/ports';
import type { SwitchProgramName } from '@lockfabric/locks-common';
import { SeededRandom } from '@lockfabric/sim';
import { allocateSwitchQueues, fissLockDecider, forwardProgram, netlockProgram, profileLockTrace } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';
import { createKeyChooser } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';

/** Requests sampled from the workload to profile lock popularity before a NetLock run. */
const PROFILE_SAMPLES = 20_000;
const NETLOCK_SLOT_BUDGET = 4_096;

/**
 * The switch program a protocol asks for, built from the switch model library. NetLock's hot-lock
 * queues are chosen the way its paper does: profile a pre-run trace (here sampled from the same
 * workload, with its own seed) and solve the slot knapsack.
 */
export function buildSwitchProgram(name: SwitchProgramName, spec: WorkloadSpec): SwitchProgram {
  switch (name) {
    case 'forward':
      return forwardProgram();
    case 'fisslock':
      // Small tables still spread over the decider's MAUs (each split array needs a part per stage).
      return fissLockDecider({ lockCount: Math.max(spec.locks, 1_024) });
    case 'netlock': {
      const keys = createKeyChooser(spec, new SeededRandom((spec.seed ^ 0x5eed) >>> 0));
      const trace = Array.from({ length: PROFILE_SAMPLES }, (_, i) => ({ lock: keys.next(), requester: String(i % spec.clients) }));
      return netlockProgram({ slotBudget: NETLOCK_SLOT_BUDGET, allocation: allocateSwitchQueues(profileLockTrace(trace), NETLOCK_SLOT_BUDGET) });
    }
    default:
      throw new ConfigError([`switch program ${name} is not available in this build`]);
  }
}
