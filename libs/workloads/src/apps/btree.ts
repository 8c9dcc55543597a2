import { LockFabricError } from '@lockfabric/ports';
import type { Grant, RemoteAddr, Verbs } from '@lockfabric/ports';
import { BTREE_KEY_GAP, FIRST_ALLOCATED_NODE, META_NODE, childIndex, decodeNode, encodeNode, lowerBound, nodeBytes } from './btree-node.js';
import type { TreeNode } from './btree-node.js';
import { itemAddress } from './types.js';
import type { BTreeSpec, DataRegions } from './types.js';

/** The tree needs a node slot beyond `maxNodes`. */
export class TreeFullError extends LockFabricError {
  readonly code = 'TREE_FULL';
  constructor(readonly maxNodes: number) {
    super(`the B+tree has used all ${maxNodes} node slots; give a larger --btree-max-nodes`);
  }
}

/** Node slots for a run: the bulk-loaded tree twice over, plus room for every insert to split. */
export function btreeMaxNodes(app: BTreeSpec, operations: number | undefined): number {
  if (app.maxNodes !== undefined) return app.maxNodes;
  const bulk = bulkLoadPlan(app.keys, app.fanout).nodes;
  const inserts = operations === undefined ? app.keys : Math.ceil(operations * app.insertRatio);
  return 2 * bulk + Math.ceil((2 * inserts) / Math.max(1, Math.floor(app.fanout / 2))) + 64;
}

/** Initial key number i (1-based) and its value. */
export function initialKey(i: number): number {
  return i * BTREE_KEY_GAP;
}

/** How a bulk load packs `keys` keys: node counts per level, leaves first. */
function bulkLoadPlan(keys: number, fanout: number): { levels: number[]; nodes: number } {
  const levels: number[] = [];
  let n = keys;
  for (;;) {
    const k = Math.max(1, Math.ceil(n / fanout));
    levels.push(k);
    if (k === 1) break;
    n = k;
  }
  return { levels, nodes: levels.reduce((a, b) => a + b, 0) };
}

/** Splits n items into k runs as evenly as possible. */
function evenRuns(n: number, k: number): number[] {
  return Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));
}

/**
 * The data-region contents of a bulk-loaded tree (Sherman loads its index before measuring):
 * keys 1·gap … n·gap, value i for key i·gap, nodes packed full level by level. One image per
 * memory node, `slotsPerNode` node slots each.
 */
export function bulkLoadImage(app: BTreeSpec, maxNodes: number, memoryNodes: number): Uint8Array[] {
  const size = nodeBytes(app.fanout);
  const images = Array.from({ length: memoryNodes }, () => new Uint8Array(Math.ceil(maxNodes / memoryNodes) * size));
  const put = (id: number, bytes: Uint8Array) => images[id % memoryNodes]!.set(bytes, Math.floor(id / memoryNodes) * size);
  const plan = bulkLoadPlan(app.keys, app.fanout);
  if (plan.nodes + 1 > maxNodes) throw new TreeFullError(maxNodes);
  let nextId = 1;
  // Entries of the level being built: (low key, value or child id).
  let entries: { key: number; value: bigint }[] = Array.from({ length: app.keys }, (_, i) => ({ key: initialKey(i + 1), value: BigInt(i + 1) }));
  let level = 0;
  let rootId = 1;
  for (const count of plan.levels) {
    const runs = evenRuns(entries.length, count);
    const ids = runs.map(() => nextId++);
    const parents: { key: number; value: bigint }[] = [];
    let at = 0;
    runs.forEach((len, i) => {
      const chunk = entries.slice(at, at + len);
      at += len;
      const low = i === 0 ? 0 : chunk[0]!.key;
      const high = i === runs.length - 1 ? Infinity : entries[at]!.key;
      // An inner node's first key is its low fence.
      const keys = chunk.map((e, j) => (level > 0 && j === 0 ? low : e.key));
      put(ids[i]!, encodeNode({ version: 1n, level, low, high, sibling: i === runs.length - 1 ? 0 : ids[i + 1]!, keys, values: chunk.map((e) => e.value) }, app.fanout));
      parents.push({ key: low, value: BigInt(ids[i]!) });
    });
    rootId = ids[0]!;
    entries = parents;
    level++;
  }
  const meta = new Uint8Array(size);
  const view = new DataView(meta.buffer);
  view.setBigUint64(0, BigInt(rootId), true);
  view.setBigUint64(8, BigInt(nextId - FIRST_ALLOCATED_NODE), true);
  put(META_NODE, meta);
  return images;
}

/** How the tree client takes and gives back node locks (the run's lock client, with history). */
export interface NodeLocks {
  lock(node: number): Promise<Grant>;
  unlock(grant: Grant): Promise<void>;
}

export interface TreeCounters {
  reads: number;
  writes: number;
  atomics: number;
  /** READs repeated because the node was torn (versions differ). */
  tornReads: number;
  /** Right moves along B-links (a split moved the key range). */
  rightMoves: number;
  splits: number;
  rootGrowths: number;
}

export function newTreeCounters(): TreeCounters {
  return { reads: 0, writes: 0, atomics: 0, tornReads: 0, rightMoves: 0, splits: 0, rootGrowths: 0 };
}

/**
 * One client's view of the tree: Sherman's design (§4 of its paper, used by DecLock §6). Lookups
 * take no lock: they READ nodes, retry a READ whose versions differ, and follow right siblings
 * when a key is at or beyond a node's high fence (Lehman–Yao B-link). Updates and inserts lock
 * the leaf exclusive, re-READ it under the lock, and WRITE it back whole. A full node splits to
 * the right under its lock; the separator then goes into the parent under the parent's lock, and
 * a split of the root grows the tree under the meta node's lock (lock 0).
 */
export class BTreeClient {
  private readonly size: number;
  constructor(
    private readonly app: BTreeSpec,
    private readonly maxNodes: number,
    private readonly regions: DataRegions,
    private readonly verbs: Verbs,
    private readonly locks: NodeLocks,
    readonly counters: TreeCounters = newTreeCounters(),
  ) {
    this.size = nodeBytes(app.fanout);
  }

  private addr(id: number): RemoteAddr {
    return itemAddress(this.regions, id, this.size);
  }

  async readNode(id: number): Promise<TreeNode> {
    for (;;) {
      this.counters.reads++;
      const node = decodeNode(await this.verbs.read(this.addr(id), this.size, { lock: id }), this.app.fanout);
      if (node.whole) return node;
      this.counters.tornReads++;
    }
  }

  private async writeNode(id: number, node: Omit<TreeNode, 'whole'>): Promise<void> {
    this.counters.writes++;
    await this.verbs.write(this.addr(id), encodeNode(node, this.app.fanout), { lock: id });
  }

  private async rootId(): Promise<number> {
    this.counters.reads++;
    const bytes = await this.verbs.read(this.addr(META_NODE), 8, { lock: META_NODE });
    const root = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
    return root === 0 ? 1 : root;
  }

  private async allocate(): Promise<number> {
    this.counters.atomics++;
    const old = await this.verbs.faa({ ...this.addr(META_NODE), offset: this.addr(META_NODE).offset + 8 }, 1n, { lock: META_NODE });
    const id = Number(old) + FIRST_ALLOCATED_NODE;
    if (id >= this.maxNodes) throw new TreeFullError(this.maxNodes);
    return id;
  }

  /** The node at `level` whose range holds `key`, found without locks; undefined when the tree is lower. */
  private async find(key: number, level: number): Promise<{ id: number; node: TreeNode } | undefined> {
    let id = await this.rootId();
    let node = await this.readNode(id);
    if (node.level < level) return undefined;
    for (;;) {
      if (key >= node.high && node.sibling !== 0) {
        this.counters.rightMoves++;
        id = node.sibling;
      } else if (node.level === level) return { id, node };
      else id = Number(node.values[childIndex(node, key)]!);
      node = await this.readNode(id);
    }
  }

  /** Lock-free search: the key's value, or undefined. */
  async lookup(key: number): Promise<bigint | undefined> {
    const found = await this.find(key, 0);
    if (!found) return undefined;
    const i = lowerBound(found.node.keys, key);
    return found.node.keys[i] === key ? found.node.values[i] : undefined;
  }

  /** Insert or update `key` (an insert of a present key updates it). */
  async upsert(key: number, value: bigint): Promise<void> {
    const leaf = await this.find(key, 0);
    await this.insertAt(0, leaf!.id, key, value);
  }

  /** Puts (key, value) into the level-`level` node `id` or a right sibling of it; splits when full. */
  private async insertAt(level: number, start: number, key: number, value: bigint): Promise<void> {
    let id = start;
    for (;;) {
      const grant = await this.locks.lock(id);
      let held = true;
      const unlock = async () => {
        if (!held) return;
        held = false;
        await this.locks.unlock(grant);
      };
      try {
        const node = await this.readNode(id);
        if (key >= node.high && node.sibling !== 0) {
          // Split meanwhile: the key now belongs to a right sibling.
          this.counters.rightMoves++;
          await unlock();
          id = node.sibling;
          continue;
        }
        const keys = [...node.keys];
        const values = [...node.values];
        const at = lowerBound(keys, key);
        if (keys[at] === key) values[at] = value;
        else {
          keys.splice(at, 0, key);
          values.splice(at, 0, value);
        }
        const version = node.version + 1n;
        if (keys.length <= this.app.fanout) {
          await this.writeNode(id, { ...node, version, keys, values });
          await unlock();
          return;
        }
        // Split: the upper half moves to a new right sibling, written before the link to it.
        this.counters.splits++;
        const mid = Math.ceil(keys.length / 2);
        const separator = keys[mid]!;
        const right = await this.allocate();
        // Mutant: the split runs without the node's lock; a concurrent writer's change is lost.
        if (this.app.mutantUnlockedSplit) await unlock();
        await this.writeNode(right, { version: 1n, level, low: separator, high: node.high, sibling: node.sibling, keys: keys.slice(mid), values: values.slice(mid) });
        await this.writeNode(id, { version, level, low: node.low, high: separator, sibling: right, keys: keys.slice(0, mid), values: values.slice(0, mid) });
        await unlock();
        await this.insertSeparator(level + 1, separator, right);
        return;
      } finally {
        await unlock();
      }
    }
  }

  /** Links a new node into its parent level, growing the tree under the meta lock when the root split. */
  private async insertSeparator(level: number, separator: number, child: number): Promise<void> {
    for (;;) {
      const parent = await this.find(separator, level);
      if (parent) return this.insertAt(level, parent.id, separator, BigInt(child));
      const grant = await this.locks.lock(META_NODE);
      try {
        const rootId = await this.rootId();
        const root = await this.readNode(rootId);
        if (root.level >= level) continue;
        this.counters.rootGrowths++;
        const id = await this.allocate();
        await this.writeNode(id, { version: 1n, level, low: 0, high: Infinity, sibling: 0, keys: [0, separator], values: [BigInt(rootId), BigInt(child)] });
        const word = new Uint8Array(8);
        new DataView(word.buffer).setBigUint64(0, BigInt(id), true);
        this.counters.writes++;
        await this.verbs.write(this.addr(META_NODE), word, { lock: META_NODE });
        return;
      } finally {
        await this.locks.unlock(grant);
      }
    }
  }
}
