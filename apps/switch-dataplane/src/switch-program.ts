import { ConfigError } from '@lockfabric/ports';
import { forwardProgram } from '@lockfabric/switch';
import type { SwitchProgram } from '@lockfabric/switch';

/** Programs this build can load; `fisslock` and `netlock` arrive with their protocols. */
export const AVAILABLE_SWITCH_PROGRAMS = ['forward'] as const;

/**
 * The data-plane program named by `switch.program`. The config schema accepts every program the
 * design names, so one missing from this build is a configuration problem, reported as such.
 */
export function createSwitchProgram(name: string): SwitchProgram {
  if (name === 'forward') return forwardProgram();
  throw new ConfigError([`switch.program: program ${name} is not available in this build (available: ${AVAILABLE_SWITCH_PROGRAMS.join(', ')})`]);
}
