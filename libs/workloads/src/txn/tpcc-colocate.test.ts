import { describe, expect, it } from 'vitest';
import { txnWorkloadOf } from './generator.js';
import { TPCC_CUSTOMERS_PER_DISTRICT, TPCC_CUSTOMERS_PER_LOCK, TPCC_DISTRICTS, TPCC_ITEMS, TPCC_ITEMS_PER_LOCK, TpccLayout } from './tpcc.js';
import { validateTxnRunSpec } from './types.js';

// ParLock's home of a lock: compute nodes in cluster order, lock mod n
const homeOf = (nodes: readonly number[], lock: number): number => nodes[lock % nodes.length]!;

describe('tpcc colocate (FissLock §7.4 placement: a warehouse\'s locks live on its clients\' node)', () => {
  const nodes = [1, 2, 3, 4];
  const spec = (colocate?: number[]) => ({ workload: { kind: 'tpcc' as const, warehouses: 8, ...(colocate ? { colocate } : {}) }, seed: 3 });

  it('the same lock count, and about 90 % of transactions take only locks homed on the client\'s node', () => {
    const plain = txnWorkloadOf(spec());
    const w = txnWorkloadOf(spec(nodes));
    expect(w.lockCount).toBe(plain.lockCount);
    let local = 0;
    let total = 0;
    let plainLocal = 0;
    for (const node of nodes) {
      for (let c = 0; c < 4; c++) {
        const s = w.stream(`${node}/${c}`);
        const p = plain.stream(`${node}/${c}`);
        for (let i = 0; i < 500; i++) {
          const t = s.next();
          for (const l of t.locks) expect(l.lock).toBeLessThan(w.lockCount);
          total++;
          if (t.locks.every((l) => homeOf(nodes, l.lock) === node)) local++;
          if (p.next().locks.every((l) => homeOf(nodes, l.lock) === node)) plainLocal++;
        }
      }
    }
    // TPC-C: 1 % remote order lines (NEW_ORDER), 15 % remote customers (PAYMENT): ~89 % local
    expect(local / total).toBeGreaterThan(0.85);
    expect(local / total).toBeLessThan(0.95);
    expect(plainLocal / total).toBeLessThan(0.05);
  });

  it('every lock of the layout gets its own id: ids are a permutation of 0…lockCount-1, warehouse w\'s ids ≡ w mod W', () => {
    const layout = new TpccLayout(4, undefined, [7, 8]);
    const ids: number[] = [];
    for (let w = 0; w < 4; w++) {
      const mine = [layout.warehouseLock(w)];
      for (let d = 0; d < TPCC_DISTRICTS; d++) {
        mine.push(layout.districtLock(w, d));
        for (let c = 0; c < TPCC_CUSTOMERS_PER_DISTRICT; c += TPCC_CUSTOMERS_PER_LOCK) mine.push(layout.customerLock(w, d, c));
      }
      for (let item = 0; item < TPCC_ITEMS; item += TPCC_ITEMS_PER_LOCK) mine.push(layout.stockLock(w, item));
      expect(mine.every((id) => id % 4 === w)).toBe(true);
      ids.push(...mine);
    }
    expect(ids.length).toBe(layout.lockCount);
    expect(new Set(ids).size).toBe(layout.lockCount);
    expect(Math.max(...ids)).toBe(layout.lockCount - 1);
  });

  it('bad colocate lists are configuration problems', () => {
    expect(validateTxnRunSpec({ workload: { kind: 'tpcc', warehouses: 6, colocate: [1, 2, 3, 4] }, seed: 1, executeNs: 0 } as never)).toEqual(['tpcc colocate: warehouses (6) must be a multiple of the 4 compute nodes']);
    expect(validateTxnRunSpec({ workload: { kind: 'tpcc', colocate: [] }, seed: 1, executeNs: 0 } as never)).toEqual(['tpcc colocate must list the compute node ids (whole numbers ≥ 0) in cluster order']);
  });
});
