import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { Assignment, SourceResult } from './assignment.js';
import { objectShape } from './config-keys.js';
import { configFileSchema } from './schema.js';

export type ReadText = (path: string) => string;

const readUtf8: ReadText = (path) => readFileSync(path, 'utf8');

/**
 * Reads a JSON config file into assignments. Unknown keys and non-object sections are reported
 * here, where the file name is known; value checks are left to schema validation.
 */
export function readConfigFile(path: string, readText: ReadText = readUtf8): SourceResult {
  const source = `config file ${path}`;
  let text: string;
  try {
    text = readText(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { assignments: [], issues: [`${source}: cannot be read${code ? ` (${code})` : ''}`] };
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { assignments: [], issues: [`${source}: not valid JSON (${(error as Error).message})`] };
  }
  return readObject(document, [], configFileSchema.shape as Record<string, z.ZodTypeAny>, source);
}

/** Assignments for the leaves of a parsed document (file or ConfigMap) against a schema shape. */
export function readObject(value: unknown, path: readonly string[], shape: Record<string, z.ZodTypeAny>, source: string): SourceResult {
  if (!isPlainObject(value)) {
    const where = path.length === 0 ? source : `${path.join('.')} from ${source}`;
    return { assignments: [], issues: [`${where}: expected an object, got ${describe(value)}`] };
  }
  const assignments: Assignment[] = [];
  const issues: string[] = [];
  for (const [name, child] of Object.entries(value)) {
    const childPath = [...path, name];
    const schema = shape[name];
    if (!schema) {
      issues.push(`${childPath.join('.')} from ${source}: unknown key`);
      continue;
    }
    const nested = objectShape(schema);
    if (nested) {
      const result = readObject(child, childPath, nested, source);
      assignments.push(...result.assignments);
      issues.push(...result.issues);
    } else {
      assignments.push({ path: childPath, value: child, source });
    }
  }
  return { assignments, issues };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'string' ? `'${value}'` : String(value);
}
