import { ConfigError } from '@lockfabric/ports';
import { netlockProgram } from '@lockfabric/lock-catalog';
import { forwardProgram } from '@lockfabric/switch';
import { fissLockDecider } from '@lockfabric/lock-catalog';
import type { SwitchProgram } from '@lockfabric/switch';
import { checkSettingsApply } from './switch-program-settings.js';
import type { SwitchProgramSettings } from './switch-program-settings.js';

/** Programs this build can load. */
export const AVAILABLE_SWITCH_PROGRAMS = ['forward', 'fisslock', 'netlock'] as const;

/**
 * The data-plane program named by `switch.program`, with its settings (fisslock's policy, lock count
 * and fallback nodes). The config schema accepts every program the design names, so one missing
 * from this build is a configuration problem, reported as such; so are settings for a program
 * that has none.
 */
export function createSwitchProgram(name: string, settings: SwitchProgramSettings = {}): SwitchProgram {
  if ((AVAILABLE_SWITCH_PROGRAMS as readonly string[]).includes(name)) checkSettingsApply(name, settings);
  if (name === 'forward') return forwardProgram();
  // Live NetLock starts with no hot-lock queues installed: every lock is served by the lock server
  // until an allocation is installed through the control plane (sim profiles a pre-run trace).
  if (name === 'netlock') return netlockProgram();
  // Without a lock count, the decider at its full capacity (1.68 M locks in 12 MAUs).
  if (name === 'fisslock') {
    return fissLockDecider({
      ...(settings.policy === undefined ? {} : { policy: settings.policy }),
      ...(settings.lockCount === undefined ? {} : { lockCount: settings.lockCount }),
      ...(settings.fallbackNodes === undefined ? {} : { fallbackNodes: settings.fallbackNodes }),
    });
  }
  throw new ConfigError([`switch.program: program ${name} is not available in this build (available: ${AVAILABLE_SWITCH_PROGRAMS.join(', ')})`]);
}
