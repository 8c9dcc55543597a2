import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readYamlDocs } from './yaml-docs.js';
import type { Doc } from './yaml-docs.js';

/**
 * A renderer for the kustomize subset LockFabric's manifests use: resources (files and
 * directories), namespace, namePrefix, labels (without selectors), patches by file (strategic
 * merge: maps merge, lists of named items merge by name, other lists replace), configMapGenerator
 * (files; create or replace; no name hash) and images. Anything else in a kustomization is an
 * error, so a manifest cannot silently rely on a feature this renderer ignores.
 */
export class KustomizeError extends Error {}

const SUPPORTED = new Set(['apiVersion', 'kind', 'namespace', 'namePrefix', 'labels', 'resources', 'patches', 'configMapGenerator', 'generatorOptions', 'images']);

interface ImageRule {
  readonly name: string;
  readonly newName?: string;
  readonly newTag?: string;
}

export function renderKustomization(dir: string): Doc[] {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new KustomizeError(`${dir}: no kustomization.yaml`);
  const [k] = readYamlDocs(file);
  if (!k) throw new KustomizeError(`${file}: empty`);
  for (const key of Object.keys(k)) if (!SUPPORTED.has(key)) throw new KustomizeError(`${file}: unsupported field ${key}`);

  let objects: Doc[] = [];
  for (const resource of list<string>(k['resources'])) {
    const path = join(dir, resource);
    if (!existsSync(path)) throw new KustomizeError(`${file}: resource ${resource} does not exist`);
    objects.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readYamlDocs(path)));
  }
  for (const generator of list<Doc>(k['configMapGenerator'])) objects = generateConfigMap(objects, generator, dir, file);
  const options = (k['generatorOptions'] ?? {}) as Doc;
  if (k['configMapGenerator'] !== undefined && options['disableNameSuffixHash'] !== true) {
    throw new KustomizeError(`${file}: name hashes are not rendered; set generatorOptions.disableNameSuffixHash`);
  }
  for (const patch of list<Doc>(k['patches'])) {
    if (typeof patch['path'] !== 'string' || Object.keys(patch).length !== 1) throw new KustomizeError(`${file}: only patches with a path are supported`);
    for (const p of readYamlDocs(join(dir, patch['path']))) {
      const target = objects.findIndex((o) => o['kind'] === p['kind'] && nameOf(o) === nameOf(p));
      if (target === -1) throw new KustomizeError(`${file}: patch ${String(p['kind'])}/${nameOf(p)} matches no object`);
      objects[target] = strategicMerge(objects[target], p) as Doc;
    }
  }
  for (const rule of list<ImageRule>(k['images'])) objects = objects.map((o) => setImages(o, rule));
  for (const entry of list<Doc>(k['labels'])) {
    if (entry['includeSelectors'] === true) throw new KustomizeError(`${file}: labels with includeSelectors are not supported`);
    objects = objects.map((o) => addLabels(o, (entry['pairs'] ?? {}) as Record<string, string>));
  }
  if (typeof k['namePrefix'] === 'string') {
    const prefix = k['namePrefix'];
    objects = objects.map((o) => withMetadata(o, { name: prefix + nameOf(o) }));
  }
  if (typeof k['namespace'] === 'string') {
    const namespace = k['namespace'];
    objects = objects.map((o) => (o['kind'] === 'Namespace' ? o : withMetadata(o, { namespace })));
  }
  return objects;
}

function generateConfigMap(objects: Doc[], generator: Doc, dir: string, file: string): Doc[] {
  const name = String(generator['name']);
  const data: Record<string, string> = {};
  for (const f of list<string>(generator['files'])) data[basename(f)] = readFileSync(join(dir, f), 'utf8');
  const configMap: Doc = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
  const behavior = generator['behavior'] ?? 'create';
  const existing = objects.findIndex((o) => o['kind'] === 'ConfigMap' && nameOf(o) === name);
  if (behavior === 'create') {
    if (existing !== -1) throw new KustomizeError(`${file}: ConfigMap ${name} already exists (use behavior: replace)`);
    return [...objects, configMap];
  }
  if (behavior !== 'replace') throw new KustomizeError(`${file}: configMapGenerator behavior ${String(behavior)} is not supported`);
  if (existing === -1) throw new KustomizeError(`${file}: ConfigMap ${name} to replace does not exist`);
  return objects.map((o, i) => (i === existing ? configMap : o));
}

/** Strategic merge for the shapes used here: lists of items with a `name` merge by name. */
export function strategicMerge(base: unknown, patch: unknown): unknown {
  if (Array.isArray(base) && Array.isArray(patch)) {
    const named = (items: unknown[]) => items.every((item) => isObject(item) && typeof item['name'] === 'string');
    if (!named(base) || !named(patch)) return patch;
    const out = base.map((item) => {
      const match = patch.find((p) => (p as Doc)['name'] === (item as Doc)['name']);
      return match === undefined ? item : strategicMerge(item, match);
    });
    for (const p of patch) if (!base.some((item) => (item as Doc)['name'] === (p as Doc)['name'])) out.push(p);
    return out;
  }
  if (isObject(base) && isObject(patch)) {
    const out: Doc = { ...base };
    for (const [key, value] of Object.entries(patch)) out[key] = key in base ? strategicMerge(base[key], value) : value;
    return out;
  }
  return patch;
}

function setImages(o: Doc, rule: ImageRule): Doc {
  const spec = podSpecOf(o);
  if (!spec) return o;
  const containers = (spec['containers'] as Doc[]).map((c) => {
    const [name, tag] = splitImage(String(c['image']));
    if (name !== rule.name) return c;
    return { ...c, image: `${rule.newName ?? name}${(rule.newTag ?? tag) !== undefined ? `:${rule.newTag ?? tag}` : ''}` };
  });
  return replacePodSpec(o, { ...spec, containers });
}

function splitImage(image: string): [string, string | undefined] {
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  return colon > slash ? [image.slice(0, colon), image.slice(colon + 1)] : [image, undefined];
}

function addLabels(o: Doc, pairs: Record<string, string>): Doc {
  const metadata = (o['metadata'] ?? {}) as Doc;
  let out = withMetadata(o, { labels: { ...((metadata['labels'] ?? {}) as Doc), ...pairs } });
  const template = templateOf(out);
  if (template) {
    const tm = (template['metadata'] ?? {}) as Doc;
    out = replaceTemplate(out, { ...template, metadata: { ...tm, labels: { ...((tm['labels'] ?? {}) as Doc), ...pairs } } });
  }
  return out;
}

function withMetadata(o: Doc, fields: Doc): Doc {
  return { ...o, metadata: { ...((o['metadata'] ?? {}) as Doc), ...fields } };
}

/** The pod template of a workload (Deployment, StatefulSet, Job), if any. */
export function templateOf(o: Doc): Doc | undefined {
  const spec = o['spec'];
  return isObject(spec) && isObject(spec['template']) ? spec['template'] : undefined;
}

export function podSpecOf(o: Doc): Doc | undefined {
  const template = templateOf(o);
  return template && isObject(template['spec']) ? template['spec'] : undefined;
}

function replaceTemplate(o: Doc, template: Doc): Doc {
  return { ...o, spec: { ...(o['spec'] as Doc), template } };
}

function replacePodSpec(o: Doc, spec: Doc): Doc {
  return replaceTemplate(o, { ...templateOf(o), spec });
}

export function nameOf(o: Doc): string {
  return String(((o['metadata'] ?? {}) as Doc)['name'] ?? '');
}

function isObject(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function list<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

export const INFRA_DIR = join(dirname(new URL(import.meta.url).pathname), '..', '..');
