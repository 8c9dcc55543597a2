import type { Assignment, SourceResult } from './assignment.js';
import { coerce } from './assignment.js';
import { CONFIG_FILE_ENV, CONFIG_KEYS, ENV_PREFIX } from './config-keys.js';

export type Env = Readonly<Record<string, string | undefined>>;

const BY_ENV = new Map(CONFIG_KEYS.map((key) => [key.env, key]));

/**
 * `LOCKFABRIC_*` variables as assignments: `memory.lockCount` ↔ `LOCKFABRIC_MEMORY_LOCK_COUNT`.
 * Lists are comma-separated. An empty variable counts as unset. A `LOCKFABRIC_*` variable that
 * names no key is an error, so a typo cannot silently leave a default in place.
 */
export function readEnv(env: Env): SourceResult {
  const assignments: Assignment[] = [];
  const issues: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || name === CONFIG_FILE_ENV) continue;
    const key = BY_ENV.get(name);
    if (!key) {
      issues.push(`${name}: unknown setting (no config key maps to it)`);
      continue;
    }
    if (raw === undefined || raw.trim() === '') continue;
    assignments.push({ path: key.path, value: coerce(key.kind, raw), source: name });
  }
  return { assignments, issues };
}
