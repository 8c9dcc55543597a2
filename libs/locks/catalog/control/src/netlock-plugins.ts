import { netlock } from '@lockfabric/lock-netlock';
import { callerPurgePort, installNetLockQueues, netlockPurgeRecovery, netlockSwitchCalls } from '@lockfabric/lock-netlock-control';
import { queueProgram } from '@lockfabric/lock-catalog';
import type { CoordinatorPlugin, CoordinatorPluginDeps, SwitchProgramCalls, SwitchProgramCallsDeps } from './plugins.js';

/**
 * Coordinator: after a compute machine's death, the switch drops its entries from every hot-lock
 * queue and grants the waiters behind them (SwitchControl.PurgeNetLockMachine over the app's
 * switch control service). A switch running another program answers that NetLock is not in use.
 */
function coordinator(deps: CoordinatorPluginDeps): CoordinatorPlugin {
  return {
    controlPlane: { recoveryDrivers: [netlockPurgeRecovery({ purge: callerPurgePort(deps.switchCaller) })] },
    counters: [],
  };
}

/** The NetLock switch program's pre-run setup: its planned hot-lock queues installed over SwitchControl. */
export const netlockQueueInstaller = [netlock.id, installNetLockQueues] as const;

/** Switch-dataplane: the NetLock program's own SwitchControl calls (queue install, purge). */
function switchCalls(deps: SwitchProgramCallsDeps): SwitchProgramCalls {
  const program = queueProgram(deps.program);
  if (!program || !deps.emit) return {};
  return netlockSwitchCalls({ program, emit: deps.emit, logger: deps.logger }) as unknown as SwitchProgramCalls;
}

export const netlockPlugins = [netlock.id, { coordinator, switchCalls }] as const;
