import type { ZodIssue } from 'zod';
import { ConfigError } from '@lockfabric/ports';
import type { Assignment } from './assignment.js';
import { CONFIG_FILE_ENV } from './config-keys.js';
import { readEnv } from './env-source.js';
import type { Env } from './env-source.js';
import { readConfigFile } from './file-source.js';
import type { ReadText } from './file-source.js';
import { readFlags } from './flag-source.js';
import type { FlagOptions } from './flag-source.js';
import { configSchema } from './schema.js';
import type { Config, NodeRole } from './schema.js';

export interface LoadConfigOptions {
  /** The role of the program loading the config; it sets `node.role`, which no source may contradict. */
  readonly role: NodeRole;
  readonly argv?: readonly string[];
  readonly env?: Env;
  /** Config file used when `--config` is not given (before LOCKFABRIC_CONFIG). */
  readonly file?: string;
  /** The caller's own flags, accepted and ignored here (see {@link readFlags}). */
  readonly extraFlags?: FlagOptions;
  /** Reads the config file; tests substitute it. */
  readonly readText?: ReadText;
}

const ROLE_PATH = ['node', 'role'] as const;

/**
 * Loads and validates the configuration. Precedence, lowest to highest: schema defaults, the JSON
 * config file (`--config FILE`, else `file`, else LOCKFABRIC_CONFIG), `LOCKFABRIC_*` environment
 * variables, flags. Every problem of every source is collected and thrown as one
 * {@link ConfigError}, each naming its key and the source it came from.
 */
export function loadConfig(options: LoadConfigOptions): Config {
  const env = options.env ?? {};
  const flags = readFlags(options.argv ?? [], options.extraFlags);
  const envResult = readEnv(env);
  const filePath = flags.configFile ?? options.file ?? nonEmpty(env[CONFIG_FILE_ENV]);
  const fileResult = filePath === undefined ? { assignments: [], issues: [] } : readConfigFile(filePath, options.readText);

  const issues = [...fileResult.issues, ...envResult.issues, ...flags.issues];
  // Later assignments win: file < env < flags.
  const assignments = [...fileResult.assignments, ...envResult.assignments, ...flags.assignments];
  const provenance = new Map<string, Assignment>();
  const merged: Record<string, unknown> = {};
  for (const assignment of assignments) {
    if (isRolePath(assignment.path) && assignment.value !== options.role) {
      issues.push(`node.role from ${assignment.source}: this program runs as '${options.role}', got ${show(assignment.value)}`);
      continue;
    }
    setPath(merged, assignment.path, assignment.value);
    provenance.set(assignment.path.join('.'), assignment);
  }
  setPath(merged, ROLE_PATH, options.role);

  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) issues.push(...parsed.error.issues.flatMap((issue) => describeIssue(issue, merged, provenance)));
  if (issues.length > 0 || !parsed.success) throw new ConfigError(issues);
  return parsed.data;
}

function describeIssue(issue: ZodIssue, input: unknown, provenance: ReadonlyMap<string, Assignment>): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `${keyText([...issue.path, key])}${from([...issue.path, key], provenance)}: unknown key`);
  }
  const key = keyText(issue.path);
  const got = valueAt(input, issue.path);
  if (got === undefined) return [`${key}: ${issue.message}`];
  return [`${key}${from(issue.path, provenance)}: ${issue.message}, got ${show(got)}`];
}

/** ` from <source>` of the longest assigned prefix of `path` (list items belong to their list). */
function from(path: readonly (string | number)[], provenance: ReadonlyMap<string, Assignment>): string {
  for (let length = path.length; length > 0; length--) {
    const assignment = provenance.get(path.slice(0, length).join('.'));
    if (assignment) return ` from ${assignment.source}`;
  }
  return ' from defaults';
}

/** `compute.memoryNodes[1]` */
function keyText(path: readonly (string | number)[]): string {
  return path.map((segment, i) => (typeof segment === 'number' ? `[${segment}]` : i === 0 ? segment : `.${segment}`)).join('');
}

function isRolePath(path: readonly string[]): boolean {
  return path.length === 2 && path[0] === ROLE_PATH[0] && path[1] === ROLE_PATH[1];
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  path.slice(0, -1).forEach((segment) => {
    const next = node[segment];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[segment] = {};
    node = node[segment] as Record<string, unknown>;
  });
  const last = path[path.length - 1];
  if (last !== undefined) node[last] = value;
}

function valueAt(input: unknown, path: readonly (string | number)[]): unknown {
  let node = input;
  for (const segment of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

/** Strings in single quotes (as typed), everything else as JSON. */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value) ?? String(value);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
