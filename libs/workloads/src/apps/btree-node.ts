/**
 * The fixed-size B+tree node in memory-node memory, as little-endian 64-bit words:
 *
 *   0        front version   (a writer bumps both versions; a READ whose two differ is torn — Sherman §4)
 *   1        level | count << 8   (level 0 = leaf)
 *   2        low fence  (inclusive; 0 = −∞)
 *   3        high fence (exclusive; 0 = +∞)
 *   4        right sibling id (0 = none): the B-link a reader follows when a split moved its key right
 *   5 …      fanout × (key, value) — a leaf's value, or an inner node's child id
 *   last     rear version
 *
 * Inner entry i covers [key_i, key_{i+1}), the last one up to the high fence, and key_0 is the low
 * fence. Node 0 is the meta node: word 0 the root id (0 = node 1), word 1 the allocation counter.
 * An all-zero region is therefore an empty tree whose root is the empty leaf 1.
 */
export interface TreeNode {
  readonly version: bigint;
  readonly level: number;
  readonly low: number;
  /** Infinity for +∞. */
  readonly high: number;
  readonly sibling: number;
  readonly keys: number[];
  readonly values: bigint[];
  /** False when the front and rear versions differ (a torn READ). */
  readonly whole: boolean;
}

const HEADER_WORDS = 5;

export function nodeBytes(fanout: number): number {
  return 8 * (HEADER_WORDS + 2 * fanout + 1);
}

export function decodeNode(bytes: Uint8Array, fanout: number): TreeNode {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const word = (i: number) => view.getBigUint64(i * 8, true);
  const front = word(0);
  const meta = Number(word(1));
  const count = Math.min(fanout + 1, meta >>> 8);
  const highRaw = Number(word(3));
  const keys: number[] = [];
  const values: bigint[] = [];
  for (let i = 0; i < Math.min(count, fanout); i++) {
    keys.push(Number(word(HEADER_WORDS + 2 * i)));
    values.push(word(HEADER_WORDS + 2 * i + 1));
  }
  // A count beyond the fan-out cannot be stored; the structural check reports it.
  if (count > fanout) keys.push(Number.NaN);
  return { version: front, level: meta & 0xff, low: Number(word(2)), high: highRaw === 0 ? Infinity : highRaw, sibling: Number(word(4)), keys, values, whole: front === word(HEADER_WORDS + 2 * fanout) };
}

export function encodeNode(node: Omit<TreeNode, 'whole'>, fanout: number): Uint8Array {
  if (node.keys.length > fanout) throw new RangeError(`a node holds at most ${fanout} entries, got ${node.keys.length}`);
  const bytes = new Uint8Array(nodeBytes(fanout));
  const view = new DataView(bytes.buffer);
  const put = (i: number, v: bigint) => view.setBigUint64(i * 8, v, true);
  put(0, node.version);
  put(1, BigInt(node.level | (node.keys.length << 8)));
  put(2, BigInt(node.low));
  put(3, node.high === Infinity ? 0n : BigInt(node.high));
  put(4, BigInt(node.sibling));
  node.keys.forEach((k, i) => {
    put(HEADER_WORDS + 2 * i, BigInt(k));
    put(HEADER_WORDS + 2 * i + 1, node.values[i]!);
  });
  put(HEADER_WORDS + 2 * fanout, node.version);
  return bytes;
}

/** Index of the inner entry whose range holds `key` (the last key_i ≤ key). */
export function childIndex(node: TreeNode, key: number): number {
  let lo = 0;
  let hi = node.keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (node.keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}

/** First index with keys[i] ≥ key. */
export function lowerBound(keys: readonly number[], key: number): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export const META_NODE = 0;
/** Node ids handed out by the allocation counter start here (1 is the first root). */
export const FIRST_ALLOCATED_NODE = 2;
/** Initial keys are spaced this far apart, so inserts of new keys land between them. */
export const BTREE_KEY_GAP = 1 << 16;
