export {
  configSchema,
  configFileSchema,
  NODE_ROLES,
  SWITCH_PROGRAMS,
  TLS_MODES,
  FISSLOCK_POLICIES,
  MAX_SWITCH_MACHINE_ID,
  LOG_LEVELS,
  DEFAULT_PORTS,
  parseComputeNodes,
  parseLeaseBounds,
} from './schema.js';
export type { Config, ConfigInput, ConfigFile, NodeRole, SwitchProgramName, LogLevel } from './schema.js';
export { CONFIG_KEYS, CONFIG_FILE_ENV, CONFIG_FILE_FLAG, ENV_PREFIX, envName, flagName } from './config-keys.js';
export type { ConfigKey, KeyKind } from './config-keys.js';
export { loadConfig } from './load-config.js';
export type { LoadConfigOptions } from './load-config.js';
export { readFlags } from './flag-source.js';
export type { FlagOptions, FlagResult } from './flag-source.js';
export { readEnv } from './env-source.js';
export type { Env } from './env-source.js';
export { readConfigFile } from './file-source.js';
export type { ReadText } from './file-source.js';
export type { Assignment, SourceResult } from './assignment.js';
export { formatConfig, redactUrls } from './format-config.js';
