import type { Config } from '@lockfabric/config';
import { ConfigError } from '@lockfabric/ports';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS } from '@lockfabric/switch';
import { lockCapacity, switchProgramKind } from '@lockfabric/lock-catalog';
import type { DeciderSettings } from '@lockfabric/lock-catalog';

/**
 * Settings of the data-plane program beyond its name, for the fisslock decider. They are ordinary
 * config keys (`switch.policy`, `switch.lockCount`, `switch.fallbackNodes`: file, environment or
 * flag), validated for type by libs/config; what needs the switch model is checked here.
 */
export type SwitchProgramSettings = DeciderSettings;

/** The config keys that hold program settings, in the order they are reported. */
export const SWITCH_PROGRAM_SETTING_KEYS = ['policy', 'lockCount', 'fallbackNodes'] as const satisfies readonly (keyof SwitchProgramSettings & keyof Config['switch'])[];

/** Locks the decider can hold in the service's pipeline (12 MAUs of 560 000 bytes: 1 680 000). */
export const SWITCH_LOCK_CAPACITY = lockCapacity(DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS);

export interface ProgramSettingsRead {
  readonly settings: SwitchProgramSettings;
  /** `switch.key = value` of each setting given, for the start line. */
  readonly described: readonly string[];
}

/**
 * The program settings of a loaded config. A lock count past the MAU capacity is a ConfigError;
 * whether the program takes settings at all is `checkSettingsApply`'s question (createSwitchProgram).
 */
export function programSettingsOf(config: Config['switch']): ProgramSettingsRead {
  const issues: string[] = [];
  const settings: { -readonly [K in keyof SwitchProgramSettings]?: SwitchProgramSettings[K] } = {};
  if (config.policy !== undefined) settings.policy = config.policy;
  if (config.lockCount !== undefined) {
    if (config.lockCount > SWITCH_LOCK_CAPACITY) issues.push(`switch.lockCount: at most ${SWITCH_LOCK_CAPACITY} locks fit the switch (MAU formula, ${DEFAULT_INGRESS_STAGES} MAUs of ${DEFAULT_MAU_CAPACITY_BITS / 8} bytes), got ${config.lockCount}`);
    else settings.lockCount = config.lockCount;
  }
  if (config.fallbackNodes !== undefined) settings.fallbackNodes = config.fallbackNodes.map(Number);
  if (issues.length > 0) throw new ConfigError(issues);
  const described = SWITCH_PROGRAM_SETTING_KEYS.filter((key) => config[key] !== undefined).map((key) => `switch.${key} = ${String(config[key])}`);
  return { settings, described };
}

/** Settings given for a program that has no use for them are a configuration error, not ignored. */
export function checkSettingsApply(program: string, settings: SwitchProgramSettings): void {
  if (switchProgramKind(program)?.takesDeciderSettings) return;
  const given = SWITCH_PROGRAM_SETTING_KEYS.filter((key) => settings[key] !== undefined);
  if (given.length > 0) throw new ConfigError(given.map((key) => `switch.${key}: applies to the fisslock program only (switch.program is ${program})`));
}
