import { ConfigError } from '@lockfabric/ports';
import { switchProgramKind, switchProgramKinds } from '@lockfabric/lock-catalog';
import type { SwitchProgram } from '@lockfabric/switch';
import { checkSettingsApply } from './switch-program-settings.js';
import type { SwitchProgramSettings } from './switch-program-settings.js';

/** Programs this build can load. */
export const AVAILABLE_SWITCH_PROGRAMS: readonly string[] = switchProgramKinds().map((k) => k.name);

/**
 * The data-plane program named by `switch.program`, with its settings (the decider's policy, lock
 * count and fallback nodes). The config schema accepts every program the design names, so one
 * missing from this build is a configuration problem, reported as such; so are settings for a
 * program that has none.
 */
export function createSwitchProgram(name: string, settings: SwitchProgramSettings = {}): SwitchProgram {
  const kind = switchProgramKind(name);
  if (!kind) throw new ConfigError([`switch.program: program ${name} is not available in this build (available: ${AVAILABLE_SWITCH_PROGRAMS.join(', ')})`]);
  checkSettingsApply(name, settings);
  return kind.create(settings);
}
