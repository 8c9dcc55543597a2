import type { AgentPool } from '../../src/agent-pool.js';
import { machineRecovery } from '../../src/recovery/machine-recovery.js';
import type { MachineRecovery, PausableRecoveryClient } from '../../src/recovery/machine-recovery.js';

/**
 * Test-only variant of `machineRecovery` with the pause rule from before the live lost-lock fix
 * (src/recovery/README.md, "The lost lock"): the pause drops the replaced link's unacknowledged
 * ACQUIREs without settling them, so a request S2 queues and whose attempt then times out never
 * sends its abort. Pass it as `recoverInProcess({ machineSteps })`; the tests that use it must fail.
 */
export function keepOldAcquires(pool: AgentPool): MachineRecovery {
  const current = machineRecovery(pool);
  return {
    ...current,
    pauseForRecovery: () => {
      for (const c of pool.recoveryClientList() as PausableRecoveryClient[]) c.recoveryPause?.();
      pool.pauseForRecovery();
    },
  };
}
