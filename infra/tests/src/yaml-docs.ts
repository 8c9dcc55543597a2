import { readFileSync } from 'node:fs';
import YAML from 'yaml';

export type Doc = Record<string, unknown>;

/** Every non-empty document of a YAML file (compose merge keys `<<` resolved). */
export function readYamlDocs(path: string): Doc[] {
  return parseYamlDocs(readFileSync(path, 'utf8'), path);
}

export function parseYamlDocs(text: string, source: string): Doc[] {
  return YAML.parseAllDocuments(text, { merge: true }).flatMap((document) => {
    if (document.errors.length > 0) throw new Error(`${source}: ${document.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = document.toJSON();
    if (value === null || value === undefined) return [];
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${source}: a document is not a mapping`);
    return [value as Doc];
  });
}
