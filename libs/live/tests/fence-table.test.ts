import { describe, expect, it } from 'vitest';
import { FenceTable, fencedDetail, refuseFenced } from '../src/fence-table.js';

const alive = (node: number, incarnation: bigint) => ({ role: 'compute', node, incarnation, state: 'alive' as const });
const dead = (node: number, incarnation: bigint) => ({ role: 'compute', node, incarnation, state: 'dead' as const });

describe('FenceTable', () => {
  it('fences a compute node from the view that declares it dead, once', () => {
    const table = new FenceTable();
    expect(table.applyView(5n, [alive(1, 1n), alive(2, 1n)])).toStrictEqual([]);
    expect(table.applyView(6n, [alive(1, 1n), dead(2, 1n)])).toStrictEqual([{ node: 2, incarnation: 1n, epoch: 6n }]);
    expect(table.fenceOf(2)).toBeDefined();
    expect(table.fenceOf(1)).toBeUndefined();
    // The same view re-announced, and the failure notice of the same death, add nothing.
    expect(table.applyView(6n, [alive(1, 1n), dead(2, 1n)])).toStrictEqual([]);
    expect(table.applyFailure('compute', 2, 1n, 6n)).toBeUndefined();
    expect(fencedDetail(table.fenceOf(2)!)).toMatch(/^fenced: compute node 2 \(incarnation 1\).*epoch 6/);
  });

  it('keeps a resumed (paused) node fenced: only a higher incarnation is admitted again', () => {
    const table = new FenceTable();
    table.applyFailure('compute', 2, 1n, 7n);
    table.applyView(7n, [alive(2, 1n)]);
    expect(table.fenceOf(2)).toBeDefined();
    table.applyView(8n, [alive(2, 2n)]);
    expect(table.fenceOf(2)).toBeUndefined();
    // A late notice about the old incarnation does not fence the new one.
    expect(table.applyFailure('compute', 2, 1n, 9n)).toBeUndefined();
    expect(table.fenceOf(2)).toBeUndefined();
  });

  it('fences a compute node that leaves the view (a restarted coordinator did not hear it)', () => {
    const table = new FenceTable();
    table.applyView(3n, [alive(1, 1n), alive(2, 4n)]);
    expect(table.applyView(4n, [alive(1, 1n)])).toStrictEqual([{ node: 2, incarnation: 4n, epoch: 4n }]);
    // It comes back restarted: admitted.
    table.applyView(5n, [alive(1, 1n), alive(2, 5n)]);
    expect(table.fenceOf(2)).toBeUndefined();
  });

  it('ignores input older than the newest epoch, and members that are not compute nodes', () => {
    const table = new FenceTable();
    table.applyView(10n, [alive(2, 1n)]);
    expect(table.applyView(9n, [dead(2, 1n)])).toStrictEqual([]);
    expect(table.applyFailure('compute', 2, 1n, 9n)).toBeUndefined();
    expect(table.applyView(11n, [alive(2, 1n), { role: 'memory', node: 0, incarnation: 1n, state: 'dead' }])).toStrictEqual([]);
    expect(table.applyFailure('switch', 100, 1n, 12n)).toBeUndefined();
    expect(table.all()).toStrictEqual([]);
  });
});

describe('FenceTable of a compute node (self) and refuseFenced', () => {
  it('never fences its own node, by view, by absence or by notice', () => {
    const table = new FenceTable({ self: 1 });
    table.applyView(1n, [alive(1, 1n), alive(2, 1n)]);
    expect(table.applyView(2n, [dead(1, 1n), alive(2, 1n)])).toStrictEqual([]);
    expect(table.applyView(3n, [alive(2, 1n)])).toStrictEqual([]);
    expect(table.applyFailure('compute', 1, 1n, 4n)).toBeUndefined();
    expect(table.fenceOf(1)).toBeUndefined();
    // Without `self` the same input fences node 1: the exemption is what keeps it served.
    const plain = new FenceTable();
    plain.applyView(1n, [alive(1, 1n)]);
    expect(plain.applyFailure('compute', 1, 1n, 4n)).toBeDefined();
  });

  it('refuses a fenced initiator with bad-rkey and the fence detail, and lets others run', () => {
    const table = new FenceTable();
    const batch = [{ op: 'read' as const, addr: { node: 0, region: 0, rkey: 1, offset: 0 }, length: 8 }];
    table.applyFailure('compute', 2, 3n, 4n);
    expect(refuseFenced(table, batch, 2)).toStrictEqual([{ status: 'bad-rkey', detail: fencedDetail(table.fenceOf(2)!) }]);
    expect(refuseFenced(table, batch, 3)).toBeUndefined();
  });
});
