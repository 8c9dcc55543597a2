import { ConfigError } from '@lockfabric/ports';
import { DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS, FISSLOCK_POLICIES, MAX_MACHINE_ID, lockCapacity } from '@lockfabric/switch';
import type { FissLockPolicy } from '@lockfabric/switch';

/**
 * Settings of the data-plane program beyond its name (`switch.program`), for the fisslock decider.
 * They are read like every other setting — `--switch.policy`, `LOCKFABRIC_SWITCH_POLICY`, flags over
 * environment — but here, not by libs/config: its schema does not know them yet, so they are taken
 * out of argv and env before the rest goes to `loadConfig` (README "Program settings").
 */
export interface SwitchProgramSettings {
  readonly policy?: FissLockPolicy;
  /** Locks decided on the switch (ids at or above it go to the fallback lock managers). */
  readonly lockCount?: number;
  /** Machines of the fallback lock managers, for out-of-range packets that name no destination. */
  readonly fallbackNodes?: readonly number[];
}

type SettingName = keyof SwitchProgramSettings;

interface SettingKey {
  readonly name: SettingName;
  /** Dotted key, as in the config (`switch.lockCount`). */
  readonly key: string;
  readonly flag: string;
  readonly env: string;
}

export const SWITCH_PROGRAM_SETTING_KEYS: readonly SettingKey[] = [
  { name: 'policy', key: 'switch.policy', flag: 'switch.policy', env: 'LOCKFABRIC_SWITCH_POLICY' },
  { name: 'lockCount', key: 'switch.lockCount', flag: 'switch.lock-count', env: 'LOCKFABRIC_SWITCH_LOCK_COUNT' },
  { name: 'fallbackNodes', key: 'switch.fallbackNodes', flag: 'switch.fallback-nodes', env: 'LOCKFABRIC_SWITCH_FALLBACK_NODES' },
];

/** Locks the decider can hold in the service's pipeline (12 MAUs of 560 000 bytes: 1 680 000). */
export const SWITCH_LOCK_CAPACITY = lockCapacity(DEFAULT_INGRESS_STAGES, DEFAULT_MAU_CAPACITY_BITS);

export interface ProgramSettingsSplit {
  readonly settings: SwitchProgramSettings;
  /** `argv` without the program settings' flags, for `loadConfig`. */
  readonly argv: string[];
  /** `env` without the program settings' variables, for `loadConfig`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `key = value (source)` of each setting given, for the start line. */
  readonly described: readonly string[];
}

/**
 * Takes the program settings out of `argv` and `env` and validates them. Throws one ConfigError
 * listing every problem, each naming its key and source, as `loadConfig` does.
 */
export function readSwitchProgramSettings(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ProgramSettingsSplit {
  const issues: string[] = [];
  const raw = new Map<SettingName, { value: string; source: string }>();
  const restEnv: Record<string, string | undefined> = { ...env };
  for (const key of SWITCH_PROGRAM_SETTING_KEYS) {
    const value = env[key.env];
    delete restEnv[key.env];
    if (value !== undefined && value.trim() !== '') raw.set(key.name, { value, source: key.env });
  }
  const restArgv: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    const key = SWITCH_PROGRAM_SETTING_KEYS.find((k) => token === `--${k.flag}` || token.startsWith(`--${k.flag}=`));
    if (!key) {
      restArgv.push(token);
      continue;
    }
    const inline = token.startsWith(`--${key.flag}=`) ? token.slice(key.flag.length + 3) : undefined;
    const value = inline ?? argv[i + 1];
    if (inline === undefined) i++;
    if (value === undefined || (inline === undefined && value.startsWith('--'))) {
      issues.push(`--${key.flag}: expects a value`);
      if (value !== undefined) i--; // the next flag is not ours to swallow
      continue;
    }
    raw.set(key.name, { value, source: `--${key.flag}` });
  }

  const settings: { -readonly [K in SettingName]?: SwitchProgramSettings[K] } = {};
  const described: string[] = [];
  for (const key of SWITCH_PROGRAM_SETTING_KEYS) {
    const given = raw.get(key.name);
    if (!given) continue;
    const at = `${key.key} from ${given.source}`;
    const text = given.value.trim();
    switch (key.name) {
      case 'policy':
        if (FISSLOCK_POLICIES.includes(text as FissLockPolicy)) settings.policy = text as FissLockPolicy;
        else issues.push(`${at}: expected one of ${FISSLOCK_POLICIES.join(', ')}, got '${given.value}'`);
        break;
      case 'lockCount': {
        const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
        if (!Number.isSafeInteger(n) || n < 1) issues.push(`${at}: expected a positive integer, got '${given.value}'`);
        else if (n > SWITCH_LOCK_CAPACITY) issues.push(`${at}: at most ${SWITCH_LOCK_CAPACITY} locks fit the switch (MAU formula, ${DEFAULT_INGRESS_STAGES} MAUs of ${DEFAULT_MAU_CAPACITY_BITS / 8} bytes), got ${n}`);
        else settings.lockCount = n;
        break;
      }
      case 'fallbackNodes': {
        const items = text.split(',').map((item) => item.trim());
        const nodes = items.map((item) => (/^\d+$/.test(item) ? Number(item) : Number.NaN));
        if (nodes.some((n) => !Number.isSafeInteger(n) || n > MAX_MACHINE_ID)) issues.push(`${at}: expected a comma-separated list of machine ids in [0, ${MAX_MACHINE_ID}], got '${given.value}'`);
        else settings.fallbackNodes = nodes;
        break;
      }
    }
    described.push(`${key.key} = ${text} (${given.source})`);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return { settings, argv: restArgv, env: restEnv, described };
}

/** Settings given for a program that has no use for them are a configuration error, not ignored. */
export function checkSettingsApply(program: string, settings: SwitchProgramSettings): void {
  if (program === 'fisslock') return;
  const given = SWITCH_PROGRAM_SETTING_KEYS.filter((k) => settings[k.name] !== undefined).map((k) => k.key);
  if (given.length > 0) throw new ConfigError(given.map((key) => `${key}: applies to the fisslock program only (switch.program is ${program})`));
}
