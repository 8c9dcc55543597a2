import type { TreeNode } from './btree-node.js';
import { FIRST_ALLOCATED_NODE } from './btree-node.js';

export interface BTreeCheck {
  readonly ok: boolean;
  readonly height: number;
  readonly nodes: number;
  readonly keys: number;
  /** Committed keys the tree does not hold. */
  readonly missing: number;
  readonly problems: readonly string[];
}

/** What the check reads: the meta node's two words and any node by id. */
export interface TreeImage {
  readonly rootId: number;
  /** Nodes handed out so far (allocation counter): ids 1 … allocated. */
  readonly allocated: number;
  node(id: number): Promise<TreeNode>;
}

const MAX_PROBLEMS = 20;

/**
 * The structural check of a B+tree after a run, level by level from the root:
 * - every node READ whole (versions agree), 1 … fan-out entries, at least ⌊fan-out/2⌋ below the root;
 * - keys strictly ascending and inside the node's fences [low, high); an inner node's first key
 *   is its low fence;
 * - each child sits one level lower and its fences are exactly its entry's range;
 * - each level is one B-link chain from −∞ to +∞ in key order (sibling = next node, high = next low);
 * - every allocated node is in the tree (a lost split leaves one out), and every committed key
 *   (`committed`, sorted or not) is in a leaf.
 */
export async function checkBTree(image: TreeImage, fanout: number, committed: Iterable<number>): Promise<BTreeCheck> {
  const problems: string[] = [];
  let problemCount = 0;
  const note = (text: string) => {
    problemCount++;
    if (problems.length < MAX_PROBLEMS) problems.push(text);
  };
  const minEntries = Math.floor(fanout / 2);
  const seen = new Set<number>();
  const leafKeys: number[] = [];
  let level: { id: number; low: number; high: number }[] = [{ id: image.rootId, low: 0, high: Infinity }];
  let expectedLevel = -1;
  let height = 0;
  while (level.length > 0) {
    height++;
    const next: { id: number; low: number; high: number }[] = [];
    const nodes: TreeNode[] = [];
    for (const { id, low, high } of level) {
      if (seen.has(id)) {
        note(`node ${id} is reached twice`);
        continue;
      }
      seen.add(id);
      const node = await image.node(id);
      nodes.push(node);
      const where = `node ${id} (level ${node.level})`;
      if (!node.whole) note(`${where} is torn (front and rear versions differ)`);
      if (expectedLevel === -1) expectedLevel = node.level;
      if (node.level !== expectedLevel) note(`${where} should be at level ${expectedLevel}`);
      if (node.low !== low || node.high !== high) note(`${where} has fences [${node.low}, ${node.high}), its parent gives [${low}, ${high})`);
      const isRoot = id === image.rootId;
      if (node.keys.length > fanout || node.keys.some((k) => Number.isNaN(k))) note(`${where} holds more than the fan-out ${fanout}`);
      else if (!isRoot && node.keys.length < minEntries) note(`${where} holds ${node.keys.length} entries, fewer than ⌊fan-out/2⌋ = ${minEntries}`);
      else if (isRoot && node.level > 0 && node.keys.length < 2) note(`${where} is an inner root with ${node.keys.length} entries`);
      for (let i = 0; i < node.keys.length; i++) {
        const k = node.keys[i]!;
        if (i > 0 && !(k > node.keys[i - 1]!)) note(`${where}: key ${k} at ${i} is not above ${node.keys[i - 1]}`);
        if (k < node.low || k >= node.high) note(`${where}: key ${k} is outside its fences [${node.low}, ${node.high})`);
      }
      if (node.level === 0) leafKeys.push(...node.keys);
      else {
        if (node.keys[0] !== node.low) note(`${where}: first key ${node.keys[0]} is not its low fence ${node.low}`);
        node.keys.forEach((k, i) => next.push({ id: Number(node.values[i]!), low: k, high: i + 1 < node.keys.length ? node.keys[i + 1]! : node.high }));
      }
    }
    // The B-link chain of this level.
    for (let i = 0; i < nodes.length; i++) {
      const id = level[i]!.id;
      const node = nodes[i]!;
      const following = level[i + 1];
      if (following === undefined) {
        if (node.sibling !== 0 || node.high !== Infinity) note(`node ${id}, last of level ${node.level}, links to ${node.sibling} with high fence ${node.high}`);
      } else if (node.sibling !== following.id) note(`node ${id} links to ${node.sibling}, but the next node of level ${node.level} is ${following.id}`);
    }
    expectedLevel--;
    if (expectedLevel < 0 && next.length > 0) {
      note('leaves have children');
      break;
    }
    level = next;
  }
  for (let id = 1; id <= image.allocated; id++) if (!seen.has(id)) note(`node ${id} was allocated but is not in the tree`);
  for (let i = 1; i < leafKeys.length; i++) if (!(leafKeys[i]! > leafKeys[i - 1]!)) note(`leaf keys out of order: ${leafKeys[i - 1]} then ${leafKeys[i]}`);
  let missing = 0;
  const present = new Set(leafKeys);
  for (const key of committed) {
    if (!present.has(key)) {
      missing++;
      note(`committed key ${key} is not in the tree`);
    }
  }
  return { ok: problemCount === 0, height, nodes: seen.size, keys: leafKeys.length, missing, problems };
}

/** Ids 1 … allocated are in use, given the meta node's allocation counter. */
export function allocatedNodes(counter: bigint): number {
  return Number(counter) + FIRST_ALLOCATED_NODE - 1;
}
