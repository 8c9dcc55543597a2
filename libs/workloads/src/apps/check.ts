import type { Verbs } from '@lockfabric/ports';
import { allocatedNodes, checkBTree } from './btree-check.js';
import type { BTreeCheck } from './btree-check.js';
import { bulkLoadImage, initialKey } from './btree.js';
import { META_NODE, decodeNode, nodeBytes } from './btree-node.js';
import { checkObjectStore, decodeObject, objectStoreItemBytes } from './object-store.js';
import type { ObjectStoreCheck } from './object-store.js';
import type { AppRunLog } from './runner.js';
import { dataBytesPerNode, itemAddress } from './types.js';
import type { AppSpec, DataRegions } from './types.js';

/**
 * What each memory node's data region starts with: zeros for the object store (every object
 * "never written"), the bulk-loaded tree for the B+tree. `items` is the run's lock count (objects,
 * or tree node slots).
 */
export function appDataImages(app: AppSpec, items: number, memoryNodes: number): Uint8Array[] {
  if (app.kind === 'btree') return bulkLoadImage(app, items, memoryNodes);
  return Array.from({ length: memoryNodes }, () => new Uint8Array(dataBytesPerNode(items, objectStoreItemBytes(app), memoryNodes)));
}

export type AppCheck = { readonly kind: 'objectstore'; readonly result: ObjectStoreCheck } | { readonly kind: 'btree'; readonly result: BTreeCheck };

/**
 * The application's own correctness check after a run, reading the data regions with `verbs`
 * (a client that took no part in the run): the content check of the object store, the
 * structural check of the tree. `committedKeys` of the log are the tree's inserts and updates;
 * every bulk-loaded key must be there too.
 */
export async function checkAppRun(app: AppSpec, log: AppRunLog, verbs: Verbs, regions: DataRegions, items: number): Promise<AppCheck> {
  if (app.kind === 'objectstore') {
    const slot = objectStoreItemBytes(app);
    const final = new Map<number, bigint | { torn: string }>();
    for (const r of log.objectOps) {
      if (r.kind !== 'set' || final.has(r.object)) continue;
      const seen = decodeObject(await verbs.read(itemAddress(regions, r.object, slot), app.objectBytes));
      final.set(r.object, 'tag' in seen ? seen.tag : seen);
    }
    return { kind: 'objectstore', result: checkObjectStore(log.objectOps, final) };
  }
  const size = nodeBytes(app.fanout);
  const metaBytes = await verbs.read(itemAddress(regions, META_NODE, size), 16);
  const meta = new DataView(metaBytes.buffer, metaBytes.byteOffset, 16);
  const root = Number(meta.getBigUint64(0, true));
  const image = {
    rootId: root === 0 ? 1 : root,
    allocated: Math.min(items - 1, allocatedNodes(meta.getBigUint64(8, true))),
    node: async (id: number) => decodeNode(await verbs.read(itemAddress(regions, id, size), size), app.fanout),
  };
  const committed = [...log.committedKeys];
  for (let i = 1; i <= app.keys; i++) committed.push(initialKey(i));
  return { kind: 'btree', result: await checkBTree(image, app.fanout, committed) };
}

/** The application part of a bench report (`application` in `--json`). */
export interface AppReport {
  readonly workload: string;
  readonly ops: number;
  readonly opsPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly opsByKind: Readonly<Record<string, number>>;
  readonly failedByCode: Readonly<Record<string, number>>;
  /** Data verbs the application issued per completed operation, by type. */
  readonly dataVerbsPerOp: Readonly<Record<string, number>>;
  /** All verbs the memory nodes served (lock and data) per completed operation. */
  readonly verbsPerOp: number;
  readonly tree?: { readonly splits: number; readonly rootGrowths: number; readonly rightMoves: number; readonly tornReads: number; readonly height: number; readonly nodes: number; readonly keys: number };
  readonly check: { readonly ok: boolean; readonly problems: readonly string[]; readonly counts?: Readonly<Record<string, number>> };
}

function percentileUs(sortedNs: readonly number[], q: number): number {
  if (sortedNs.length === 0) return 0;
  return sortedNs[Math.min(sortedNs.length - 1, Math.ceil(q * sortedNs.length) - 1)]! / 1_000;
}

export function appReport(app: AppSpec, log: AppRunLog, check: AppCheck, elapsedNs: number, nicVerbs: number): AppReport {
  const sorted = [...log.opLatenciesNs].sort((a, b) => a - b);
  const per = (n: number) => (log.ops > 0 ? n / log.ops : 0);
  return {
    workload: app.kind,
    ops: log.ops,
    opsPerSec: elapsedNs > 0 ? (log.ops * 1e9) / elapsedNs : 0,
    p50Us: percentileUs(sorted, 0.5),
    p99Us: percentileUs(sorted, 0.99),
    opsByKind: { ...log.opsByKind },
    failedByCode: { ...log.failedByCode },
    dataVerbsPerOp: { read: per(log.dataVerbs.read), write: per(log.dataVerbs.write), faa: per(log.dataVerbs.faa) },
    verbsPerOp: per(nicVerbs),
    ...(check.kind === 'btree'
      ? { tree: { splits: log.tree.splits, rootGrowths: log.tree.rootGrowths, rightMoves: log.tree.rightMoves, tornReads: log.tree.tornReads, height: check.result.height, nodes: check.result.nodes, keys: check.result.keys } }
      : {}),
    check: { ok: check.result.ok, problems: check.result.problems, ...(check.kind === 'objectstore' ? { counts: check.result.counts } : { counts: { missing: check.result.missing } }) },
  };
}

export function describeAppReport(r: AppReport): string {
  const verbs = Object.entries(r.dataVerbsPerOp).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
  const lines = [
    `  application         ${r.workload}: ${r.ops} ops (${Object.entries(r.opsByKind).map(([k, v]) => `${k} ${v}`).join(', ')}), ${Math.round(r.opsPerSec).toLocaleString('en-US')} ops/s, p50 ${r.p50Us.toFixed(1)} µs, p99 ${r.p99Us.toFixed(1)} µs`,
    `  verbs per op        ${r.verbsPerOp.toFixed(2)} at the memory nodes (lock + data); data verbs ${verbs || 'none'}`,
  ];
  if (r.tree) lines.push(`  tree                height ${r.tree.height}, ${r.tree.nodes} nodes, ${r.tree.keys} keys; ${r.tree.splits} splits, ${r.tree.rootGrowths} root growths, ${r.tree.rightMoves} right moves`);
  if (Object.keys(r.failedByCode).length > 0) lines.push(`  failed ops          ${Object.entries(r.failedByCode).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (r.check.ok) lines.push(`  ${r.workload === 'btree' ? 'structure check     ok (fences, order, fan-out, B-links, every committed key present)' : 'content check       ok (no torn, uncommitted or stale read; final objects are the last writes)'}`);
  else for (const p of r.check.problems) lines.push(`  CHECK FAILED        ${p}`);
  return lines.join('\n');
}
