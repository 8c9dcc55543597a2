import { ConfigError, errorMessage } from '@lockfabric/ports';
import { AppRunLog } from './runner.js';
import type { AppSpec } from './types.js';

/** Reserved key of `WorkloadSpec.options` on the wire that carries an application run (JSON). */
export const APP_WIRE_OPTION = 'lockfabric.application';

export function encodeAppSpec(app: AppSpec): string {
  return JSON.stringify(app);
}

export function decodeAppSpec(text: string): AppSpec {
  const refuse = (why: string) => new ConfigError([`option ${APP_WIRE_OPTION} is not an application spec: ${why}`]);
  let app: unknown;
  try {
    app = JSON.parse(text);
  } catch (error) {
    throw refuse(errorMessage(error));
  }
  if (typeof app !== 'object' || app === null) throw refuse('not an object');
  return app as AppSpec;
}

/** A compute node's application log as JSON (tags as hex strings: JSON has no 64-bit integers). */
export function encodeAppLog(log: AppRunLog): string {
  return JSON.stringify({
    ...log,
    objectOps: log.objectOps.map((r) => ({ ...r, ...(r.tag !== undefined ? { tag: r.tag.toString(16) } : {}) })),
  });
}

/** Merges compute nodes' logs (each from {@link encodeAppLog}) into one. */
export function mergeAppLogs(texts: readonly string[]): AppRunLog {
  const merged = new AppRunLog();
  for (const text of texts) {
    if (text === '') continue;
    const part = JSON.parse(text) as Omit<AppRunLog, 'objectOps'> & { objectOps: (Omit<AppRunLog['objectOps'][number], 'tag'> & { tag?: string })[] };
    for (const { tag, ...r } of part.objectOps) merged.objectOps.push({ ...r, ...(tag !== undefined ? { tag: BigInt(`0x${tag}`) } : {}) });
    merged.committedKeys.push(...part.committedKeys);
    merged.opLatenciesNs.push(...part.opLatenciesNs);
    for (const k of ['read', 'write', 'faa'] as const) merged.dataVerbs[k] += part.dataVerbs[k];
    for (const k of Object.keys(merged.tree) as (keyof AppRunLog['tree'])[]) merged.tree[k] += part.tree[k];
    merged.ops += part.ops;
    for (const [k, v] of Object.entries(part.failedByCode)) merged.failedByCode[k] = (merged.failedByCode[k] ?? 0) + v;
    for (const [k, v] of Object.entries(part.opsByKind)) merged.opsByKind[k] = (merged.opsByKind[k] ?? 0) + v;
  }
  return merged;
}
