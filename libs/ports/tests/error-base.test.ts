import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorMessage } from '../src/index.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * Error classes that still extend `Error` directly, and why. Everything else thrown across a
 * library boundary extends LockFabricError and carries a stable `code`.
 */
const PLAIN_ERRORS_ALLOWED = new Set<string>([]);

/** Names of classes in `source` that extend the built-in Error (not a subclass of it). */
export function plainErrorClasses(source: string): string[] {
  return [...source.matchAll(/\bclass\s+(\w+)\s+extends\s+Error\b/g)].map((m) => m[1]!);
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name === 'gen' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(path, out);
    else if (/(?<!\.test|\.d)\.ts$/.test(entry.name) && path.includes(`${join('', 'src')}`)) out.push(path);
  }
  return out;
}

describe('one error base', () => {
  it('finds a plain Error subclass (the scanner can fail)', () => {
    expect(plainErrorClasses('export class Broken extends Error {\n}')).toEqual(['Broken']);
    expect(plainErrorClasses('class Fine extends LockFabricError {}\nclass AlsoFine extends RangeError {}')).toEqual([]);
  });

  it('every error class in libs/ and apps/ sources extends LockFabricError, but the listed ones', () => {
    const offenders = ['libs', 'apps']
      .flatMap((top) => sourceFiles(join(ROOT, top)))
      .flatMap((file) => plainErrorClasses(readFileSync(file, 'utf8')).map((name) => ({ name, file: relative(ROOT, file) })))
      .filter(({ name }) => name !== 'LockFabricError' && !PLAIN_ERRORS_ALLOWED.has(name));
    expect(offenders).toEqual([]);
  });

  it('errorMessage gives an Error its message and anything else its string form', () => {
    expect(errorMessage(new RangeError('bad bound'))).toBe('bad bound');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
