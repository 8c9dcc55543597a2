import { z } from 'zod';
import { configSchema } from './schema.js';

/** How a string from the environment or a flag becomes a value of the key. */
export type KeyKind = 'number' | 'string' | 'string-list';

export interface ConfigKey {
  /** Key path, e.g. `['memory', 'lockCount']`. */
  readonly path: readonly string[];
  /** Dotted key, e.g. `memory.lockCount`. */
  readonly key: string;
  /** Environment variable, e.g. `LOCKFABRIC_MEMORY_LOCK_COUNT`. */
  readonly env: string;
  /** Flag without dashes, e.g. `memory.lock-count`. */
  readonly flag: string;
  readonly kind: KeyKind;
}

export const ENV_PREFIX = 'LOCKFABRIC_';
/** Environment variable naming the config file, when `--config` is not given. */
export const CONFIG_FILE_ENV = 'LOCKFABRIC_CONFIG';
export const CONFIG_FILE_FLAG = 'config';

const words = (segment: string): string[] => segment.split(/(?=[A-Z])/).map((word) => word.toLowerCase());

export function envName(path: readonly string[]): string {
  return ENV_PREFIX + path.flatMap(words).join('_').toUpperCase();
}

export function flagName(path: readonly string[]): string {
  return path.map((segment) => words(segment).join('-')).join('.');
}

/** Strips default/optional/refinement wrappers down to the schema that says what the value is. */
export function unwrap(schema: z.ZodTypeAny): z.ZodTypeAny {
  let current = schema;
  for (;;) {
    if (current instanceof z.ZodDefault) current = current._def.innerType;
    else if (current instanceof z.ZodOptional) current = current._def.innerType;
    else if (current instanceof z.ZodEffects) current = current._def.schema;
    else return current;
  }
}

/** The child schemas of an object schema, or `undefined` for a leaf. */
export function objectShape(schema: z.ZodTypeAny): Record<string, z.ZodTypeAny> | undefined {
  const inner = unwrap(schema);
  return inner instanceof z.ZodObject ? (inner.shape as Record<string, z.ZodTypeAny>) : undefined;
}

function kindOf(schema: z.ZodTypeAny, key: string): KeyKind {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodNumber) return 'number';
  if (inner instanceof z.ZodString || inner instanceof z.ZodEnum) return 'string';
  if (inner instanceof z.ZodArray && unwrap(inner.element) instanceof z.ZodString) return 'string-list';
  throw new TypeError(`config key ${key}: no environment/flag conversion for ${inner.constructor.name}`);
}

function collect(shape: Record<string, z.ZodTypeAny>, prefix: readonly string[], into: ConfigKey[]): void {
  for (const [name, child] of Object.entries(shape)) {
    const path = [...prefix, name];
    const nested = objectShape(child);
    if (nested) collect(nested, path, into);
    else into.push({ path, key: path.join('.'), env: envName(path), flag: flagName(path), kind: kindOf(child, path.join('.')) });
  }
}

function allKeys(): ConfigKey[] {
  const keys: ConfigKey[] = [];
  collect(configSchema.shape as Record<string, z.ZodTypeAny>, [], keys);
  return keys;
}

/** Every leaf key of the schema, in schema order, with its environment and flag names. */
export const CONFIG_KEYS: readonly ConfigKey[] = allKeys();
