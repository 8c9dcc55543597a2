import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import type { Assignment, SourceResult } from './assignment.js';
import { coerce } from './assignment.js';
import { CONFIG_FILE_FLAG, CONFIG_KEYS, flagName } from './config-keys.js';

export type FlagOptions = NonNullable<ParseArgsConfig['options']>;

export interface FlagResult extends SourceResult {
  /** Value of `--config FILE`, if given. */
  readonly configFile: string | undefined;
  readonly positionals: readonly string[];
}

const BY_FLAG = new Map(CONFIG_KEYS.map((key) => [key.flag, key]));

/**
 * Config flags as assignments: `--memory.lock-count=5` or `--memory.lock-count 5` sets
 * `memory.lockCount`; a list flag may repeat or take a comma-separated value. `extraOptions` are
 * flags the caller owns (the CLI's own options): they are accepted and otherwise ignored. Any other
 * flag is an error. Positionals are returned for the caller.
 */
export function readFlags(argv: readonly string[], extraOptions: FlagOptions = {}): FlagResult {
  const options: FlagOptions = { ...extraOptions, [CONFIG_FILE_FLAG]: { type: 'string' } };
  for (const key of CONFIG_KEYS) options[key.flag] = { type: 'string', multiple: key.kind === 'string-list' };
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });

  const assignments: Assignment[] = [];
  const issues: string[] = [];
  const positionals: string[] = [];
  const lists = new Map<string, string[]>();
  let configFile: string | undefined;

  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const key = BY_FLAG.get(token.name);
    if (!key && token.name !== CONFIG_FILE_FLAG) {
      if (!(token.name in extraOptions)) issues.push(`${token.rawName}: unknown flag${suggestion(token.name)}`);
      continue;
    }
    // In non-strict mode parseArgs takes the next argument as the value even when it is a flag.
    if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) {
      issues.push(`${token.rawName}: expects a value`);
      continue;
    }
    if (!key) {
      configFile = token.value;
    } else if (key.kind === 'string-list') {
      const items = lists.get(key.flag) ?? [];
      items.push(...(coerce('string-list', token.value) as string[]));
      lists.set(key.flag, items);
    } else {
      assignments.push({ path: key.path, value: coerce(key.kind, token.value), source: token.rawName });
    }
  }
  for (const [flag, items] of lists) {
    const key = BY_FLAG.get(flag);
    if (key) assignments.push({ path: key.path, value: items, source: `--${flag}` });
  }
  return { assignments, issues, configFile, positionals };
}

function suggestion(name: string): string {
  // `--memory.lockCount` → `--memory.lock-count`
  const kebab = flagName(name.split('.'));
  return kebab !== name && BY_FLAG.has(kebab) ? ` (did you mean --${kebab}?)` : '';
}
