import type { InProcessControlPlugin } from '@lockfabric/control';
import { NetLockNotInUseError, inProcessPurgePort, netlockPurgeRecovery } from './netlock-purge.js';
import type { InProcessPurge, NetLockPurgePort } from './netlock-purge.js';

/**
 * NetLock's part of an in-process control plane: each coordinator life runs the real purge trigger
 * after a compute machine's death, one attempt per death. With `purge` (the run's switch runs
 * NetLock: the switch model's purge) the switch announces a control address as a switch-dataplane
 * does and the purge reaches the model; without, a switch that announces itself answers as
 * switch-dataplane does for another program (NOT_FOUND: NetLock not in use), and a run without a
 * switch records that none was announced. Counts `netlockPurges` that reached the switch, over
 * every coordinator life.
 */
export function netlockInProcessControl(options: { readonly purge?: InProcessPurge } = {}): InProcessControlPlugin {
  let purges = 0;
  const { purge } = options;
  const port: NetLockPurgePort = purge
    ? inProcessPurgePort((machine) => {
        purges++;
        return purge(machine);
      })
    : {
        purge: async (address) => {
          throw new NetLockNotInUseError(address, 'the sim switch runs another program');
        },
      };
  return {
    announcesSwitch: purge !== undefined,
    coordinator: () => ({ recoveryDrivers: [netlockPurgeRecovery({ purge: port, maxAttempts: 1 })] }),
    counts: () => ({ netlockPurges: purges }),
  };
}
