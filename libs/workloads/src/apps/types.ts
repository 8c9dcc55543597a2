import type { RemoteAddr } from '@lockfabric/ports';

/**
 * DecLock §6 (Fig. 17, left): a DM object store. Object i lives on the memory nodes next to its
 * lock i; `get` takes the lock shared and READs the whole object, `set` takes it exclusive and
 * WRITEs it. Defaults are the IOPS-bound Twitter trace the paper uses: 414-byte objects, 65 % gets.
 */
export interface ObjectStoreSpec {
  readonly kind: 'objectstore';
  readonly objects: number;
  readonly objectBytes: number;
  /** Fraction of operations that are gets. */
  readonly getRatio: number;
  /** Mutant, for proving the content check: sets skip their lock (gets still take theirs). */
  readonly mutantSkipLock?: boolean;
}

/**
 * DecLock §6 (Fig. 17, right): a Sherman-style B+tree index whose nodes live in memory-node
 * memory, one lock per tree node. Searches are lock-free (version-checked READs, B-link right
 * moves); updates and inserts take the leaf's lock exclusive, and a split locks the parent.
 */
export interface BTreeSpec {
  readonly kind: 'btree';
  /** Keys bulk-loaded before the run (keys 1·gap … n·gap). */
  readonly keys: number;
  /** Entries per node, leaves and inner nodes alike. */
  readonly fanout: number;
  /** Fraction of operations that are lookups, and that are inserts of new keys; the rest update existing keys. */
  readonly lookupRatio: number;
  readonly insertRatio: number;
  /** Node slots (and locks); the run fails with TREE_FULL beyond it. Default: room for every insert splitting. */
  readonly maxNodes?: number;
  /** Mutant, for proving the structural check: a split gives up the node's lock before it writes the halves. */
  readonly mutantUnlockedSplit?: boolean;
}

export type AppSpec = ObjectStoreSpec | BTreeSpec;

export const APP_KINDS = ['objectstore', 'btree'] as const;

/** DecLock §6, IOPS-bound trace. */
export const OBJECTSTORE_DEFAULTS = { objects: 100_000, objectBytes: 414, getRatio: 0.65 } as const;
/** Sherman's update-heavy mix (50 % search, 50 % update), Sherman's default fan-out scale. */
export const BTREE_DEFAULTS = { keys: 100_000, fanout: 32, lookupRatio: 0.5, insertRatio: 0 } as const;

/**
 * Region index of the application data on every memory node: after the lock table (0) and the
 * descriptor slots (1). Items are spread like locks: item i on memory node i mod M, slot ⌊i/M⌋.
 */
export const DATA_REGION = 2;

/** Where application data sits: one region per memory node, in `ClientPorts.locks.memoryNodes` order. */
export type DataRegions = readonly Omit<RemoteAddr, 'offset'>[];

/** Address of item `index` of `itemBytes` (object, tree node) in the data regions. */
export function itemAddress(regions: DataRegions, index: number, itemBytes: number): RemoteAddr {
  const home = regions[index % regions.length];
  if (!home) throw new RangeError('the run has no data regions');
  return { ...home, offset: Math.floor(index / regions.length) * itemBytes };
}

/** Bytes of data region each memory node needs for `items` items of `itemBytes`. */
export function dataBytesPerNode(items: number, itemBytes: number, memoryNodes: number): number {
  return Math.max(8, Math.ceil(items / memoryNodes) * itemBytes);
}

/** Every problem with an application spec (empty when valid). */
export function validateAppSpec(app: AppSpec): string[] {
  const problems: string[] = [];
  const whole = (v: unknown, min: number): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
  const ratio = (v: unknown): boolean => typeof v === 'number' && v >= 0 && v <= 1;
  if (app.kind === 'objectstore') {
    if (!whole(app.objects, 1)) problems.push(`objectstore objects must be a whole number ≥ 1 (got ${String(app.objects)})`);
    if (!whole(app.objectBytes, 16) || app.objectBytes > 1 << 20) problems.push(`objectstore object size must be 16 … 1048576 bytes (got ${String(app.objectBytes)})`);
    if (!ratio(app.getRatio)) problems.push(`objectstore get ratio must be between 0 and 1 (got ${String(app.getRatio)})`);
  } else if (app.kind === 'btree') {
    if (!whole(app.keys, 1) || app.keys > 2 ** 32) problems.push(`btree keys must be a whole number in 1 … 2^32 (got ${String(app.keys)})`);
    if (!whole(app.fanout, 4) || app.fanout > 1024) problems.push(`btree fan-out must be a whole number in 4 … 1024 (got ${String(app.fanout)})`);
    if (!ratio(app.lookupRatio)) problems.push(`btree lookup ratio must be between 0 and 1 (got ${String(app.lookupRatio)})`);
    if (!ratio(app.insertRatio)) problems.push(`btree insert ratio must be between 0 and 1 (got ${String(app.insertRatio)})`);
    if (ratio(app.lookupRatio) && ratio(app.insertRatio) && app.lookupRatio + app.insertRatio > 1 + 1e-9) problems.push(`btree lookup ratio + insert ratio must be at most 1 (got ${app.lookupRatio} + ${app.insertRatio})`);
    if (app.maxNodes !== undefined && !whole(app.maxNodes, 2)) problems.push(`btree maxNodes must be a whole number ≥ 2 (got ${String(app.maxNodes)})`);
  } else problems.push(`application kind must be objectstore or btree (got ${JSON.stringify((app as { kind?: unknown }).kind)})`);
  return problems;
}
