import { describe, expect, it } from 'vitest';
import { allocatedNodes, checkBTree } from './btree-check.js';
import { bulkLoadImage, initialKey } from './btree.js';
import { decodeNode, encodeNode, nodeBytes } from './btree-node.js';
import type { TreeNode } from './btree-node.js';
import { checkObjectStore, decodeObject, encodeObject, objectTag } from './object-store.js';
import type { ObjectOpRecord } from './object-store.js';
import type { BTreeSpec } from './types.js';

describe('object-store content check', () => {
  it('recognises a whole object, and one torn between two writes', () => {
    const a = encodeObject(objectTag(1, 1), 414);
    const b = encodeObject(objectTag(2, 7), 414);
    expect(decodeObject(a)).toEqual({ tag: objectTag(1, 1) });
    expect(decodeObject(new Uint8Array(414))).toEqual({ tag: 0n });
    const torn = a.slice();
    torn.set(b.subarray(200), 200);
    expect('torn' in decodeObject(torn)).toBe(true);
  });

  const set = (client: string, tag: bigint, csStartNs: number, csEndNs: number): ObjectOpRecord => ({ client, object: 3, kind: 'set', tag, csStartNs, csEndNs });
  const get = (client: string, tag: bigint, csStartNs: number): ObjectOpRecord => ({ client, object: 3, kind: 'get', tag, csStartNs, csEndNs: csStartNs + 10 });
  const w1 = objectTag(1, 1);
  const w2 = objectTag(2, 1);

  it('passes a history where each get reads the last write that ended before it', () => {
    const ok = checkObjectStore([set('a', w1, 0, 10), get('b', w1, 20), set('c', w2, 40, 50), get('b', w2, 60)], new Map([[3, w2]]));
    expect(ok.problems).toEqual([]);
  });

  it('catches a read of a write still in its critical section, a stale read, a torn read and a wrong final object', () => {
    const bad = checkObjectStore(
      [set('a', w1, 0, 10), set('c', w2, 40, 50), get('b', w2, 45), get('d', w1, 60), get('e', 0n, 70), { client: 'f', object: 3, kind: 'get', torn: 'x', csStartNs: 80, csEndNs: 90 }],
      new Map([[3, w1]]),
    );
    expect(bad.ok).toBe(false);
    expect(bad.counts).toEqual({ torn: 1, uncommitted: 1, stale: 2, finalState: 1 });
  });
});

describe('B+tree structural check', () => {
  const app: BTreeSpec = { kind: 'btree', keys: 200, fanout: 8, lookupRatio: 0, insertRatio: 1 };
  const slots = 200;
  const size = nodeBytes(app.fanout);

  /** The bulk-loaded tree in memory (one memory node), with `edit`'s replacement nodes on top. */
  function image(edit?: (read: (id: number) => TreeNode) => [number, TreeNode][]) {
    const [bytes] = bulkLoadImage(app, slots, 1);
    const read = (id: number) => decodeNode(bytes!.subarray(id * size, (id + 1) * size), app.fanout);
    const meta = new DataView(bytes!.buffer, 0, 16);
    const edits = new Map(edit?.(read) ?? []);
    return { rootId: Number(meta.getBigUint64(0, true)), allocated: allocatedNodes(meta.getBigUint64(8, true)), node: async (id: number) => edits.get(id) ?? read(id) };
  }
  const committed = Array.from({ length: 200 }, (_, i) => initialKey(i + 1));

  it('passes the bulk-loaded tree', async () => {
    const result = await checkBTree(image(), app.fanout, committed);
    expect(result.problems).toEqual([]);
    expect(result.keys).toBe(200);
    expect(result.height).toBe(3);
  });

  it('catches a lost key, a fence that disagrees with the parent, and an out-of-order leaf', async () => {
    const lost = await checkBTree(image(), app.fanout, [...committed, initialKey(5) + 1]);
    expect(lost.missing).toBe(1);
    const fence = await checkBTree(image((read) => [[1, { ...read(1), high: read(1).high + 1 }]]), app.fanout, committed);
    expect(fence.problems.some((p) => p.includes('its parent gives'))).toBe(true);
    const order = await checkBTree(image((read) => [[1, { ...read(1), keys: [...read(1).keys].reverse() }]]), app.fanout, committed);
    expect(order.problems.some((p) => p.includes('is not above'))).toBe(true);
  });

  it('round-trips a node through its fixed layout', () => {
    const node = { version: 4n, level: 1, low: 10, high: Infinity, sibling: 0, keys: [10, 20], values: [3n, 4n] };
    expect(decodeNode(encodeNode(node, 8), 8)).toEqual({ ...node, whole: true });
  });
});
