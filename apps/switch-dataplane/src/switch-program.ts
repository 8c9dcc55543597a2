import { ConfigError } from '@lockfabric/ports';
import { fissLockDecider, forwardProgram, netlockProgram } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';

/** Programs this build can load. */
export const AVAILABLE_SWITCH_PROGRAMS = ['forward', 'fisslock', 'netlock'] as const;

/**
 * The data-plane program named by `switch.program`. The config schema accepts every program the
 * design names, so one missing from this build is a configuration problem, reported as such.
 */
export function createSwitchProgram(name: string): SwitchProgram {
  if (name === 'forward') return forwardProgram();
  // Live NetLock starts with no hot-lock queues installed: every lock is served by the lock server
  // until an allocation is installed through the control plane (sim profiles a pre-run trace).
  if (name === 'netlock') return netlockProgram();
  // The decider at its full capacity (1.68 M locks in 12 MAUs).
  if (name === 'fisslock') return fissLockDecider();
  throw new ConfigError([`switch.program: program ${name} is not available in this build (available: ${AVAILABLE_SWITCH_PROGRAMS.join(', ')})`]);
}
