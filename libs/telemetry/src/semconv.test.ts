import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as semconv from './semconv.js';
import type { AttributeSpec } from './semconv.js';

const doc = readFileSync(new URL('../docs/telemetry.md', import.meta.url), 'utf8');

/** Problems with the docs: registry keys without a `| key | type |` row, and span names never mentioned. */
function docProblems(text: string, registry: readonly AttributeSpec[], spanNames: readonly string[]): string[] {
  const problems: string[] = [];
  for (const { key, type } of registry) {
    if (!text.includes(`| \`${key}\` | ${type} |`)) problems.push(`attribute ${key} (${type}) is not documented`);
  }
  for (const name of spanNames) if (!text.includes(`\`${name}\``)) problems.push(`span ${name} is not documented`);
  return problems;
}

describe('semantic conventions', () => {
  it('documents every attribute with its type, and every span name', () => {
    expect(docProblems(doc, semconv.ATTRIBUTE_REGISTRY, semconv.SPAN_NAMES)).toEqual([]);
  });

  it('the documentation check catches a missing row and a wrong type', () => {
    const withoutOutcome = doc.replace('| `lockfabric.outcome` | string |', '');
    expect(docProblems(withoutOutcome, semconv.ATTRIBUTE_REGISTRY, [])).toEqual(['attribute lockfabric.outcome (string) is not documented']);
    const wrongType = doc.replace('| `lockfabric.lock.id` | int |', '| `lockfabric.lock.id` | string |');
    expect(docProblems(wrongType, semconv.ATTRIBUTE_REGISTRY, [])).toEqual(['attribute lockfabric.lock.id (int) is not documented']);
    expect(docProblems(doc, [], ['lock.steal'])).toEqual(['span lock.steal is not documented']);
  });

  it('registers every exported ATTR_* key exactly once, all under lockfabric.', () => {
    const exported = Object.entries(semconv)
      .filter(([name]) => name.startsWith('ATTR_'))
      .map(([, value]) => value as string);
    const registered = semconv.ATTRIBUTE_REGISTRY.map((spec) => spec.key);
    expect(new Set(registered).size).toBe(registered.length);
    expect([...registered].sort()).toEqual([...exported].sort());
    for (const key of registered) expect(key).toMatch(/^lockfabric\.[a-z_.]+$/);
  });

  it('names verb and recovery spans from their opcode and phase', () => {
    expect(semconv.verbSpanName('masked-cas')).toBe('verb.masked-cas');
    expect(semconv.verbSpanName('read')).toBe(semconv.SPAN_VERB_READ);
    expect(semconv.recoverySpanName('S2')).toBe('recovery.S2');
    expect(semconv.SPAN_NAMES).toHaveLength(14);
  });
});
