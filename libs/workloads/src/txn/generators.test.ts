import { describe, expect, it } from 'vitest';
import { txnWorkloadOf } from './generator.js';
import { MAX_TXN_LOCKS } from './types.js';
import type { TxnWorkload } from './generator.js';

/** Lock requests of n transactions drawn over several client streams. */
function draw(workload: TxnWorkload, n: number): { shared: number; total: number; byType: Map<string, number>; maxLocks: number; locksByType: Map<string, number> } {
  let shared = 0;
  let total = 0;
  let maxLocks = 0;
  const byType = new Map<string, number>();
  const locksByType = new Map<string, number>();
  const clients = 16;
  const streams = Array.from({ length: clients }, (_, i) => workload.stream(`${1 + (i % 2)}/${i}`));
  for (let i = 0; i < n; i++) {
    const t = streams[i % clients]!.next();
    byType.set(t.type, (byType.get(t.type) ?? 0) + 1);
    locksByType.set(t.type, (locksByType.get(t.type) ?? 0) + t.locks.length);
    maxLocks = Math.max(maxLocks, t.locks.length);
    for (let k = 0; k < t.locks.length; k++) {
      const l = t.locks[k]!;
      expect(l.lock).toBeLessThan(workload.lockCount);
      if (k > 0) expect(l.lock).toBeGreaterThan(t.locks[k - 1]!.lock);
      total++;
      if (l.mode === 'shared') shared++;
    }
  }
  return { shared, total, byType, maxLocks, locksByType };
}

describe('TATP generator', () => {
  const tatp = txnWorkloadOf({ workload: { kind: 'tatp' }, seed: 1 });

  it('has about 680 236 locks at the default 100 000 subscribers (ShiftLock §4.4)', () => {
    expect(Math.abs(tatp.lockCount - 680_236) / 680_236).toBeLessThan(0.01);
  });

  it('draws the standard mix, with about 80.6 % shared lock requests', () => {
    const n = 200_000;
    const { shared, total, byType, maxLocks } = draw(tatp, n);
    expect(Math.abs(shared / total - 0.806) / 0.806).toBeLessThan(0.01);
    const expected: Record<string, number> = { GET_SUBSCRIBER_DATA: 35, GET_NEW_DESTINATION: 10, GET_ACCESS_DATA: 35, UPDATE_SUBSCRIBER_DATA: 2, UPDATE_LOCATION: 14, INSERT_CALL_FORWARDING: 2, DELETE_CALL_FORWARDING: 2 };
    for (const [type, pct] of Object.entries(expected)) expect(Math.abs((byType.get(type) ?? 0) / n - pct / 100)).toBeLessThan(0.005);
    expect(maxLocks).toBeLessThanOrEqual(MAX_TXN_LOCKS);
  });

  it('is deterministic per (seed, client) and differs across clients', () => {
    const a = tatp.stream('1/0');
    const b = txnWorkloadOf({ workload: { kind: 'tatp' }, seed: 1 }).stream('1/0');
    const c = tatp.stream('1/1');
    const as = Array.from({ length: 50 }, () => a.next());
    expect(Array.from({ length: 50 }, () => b.next())).toEqual(as);
    expect(Array.from({ length: 50 }, () => c.next())).not.toEqual(as);
  });
});

describe('TPC-C generator', () => {
  const tpcc = txnWorkloadOf({ workload: { kind: 'tpcc' }, seed: 1 });

  it('has about 60 490 locks at the default 10 warehouses (ShiftLock §4.4)', () => {
    expect(Math.abs(tpcc.lockCount - 60_490) / 60_490).toBeLessThan(0.01);
    expect(txnWorkloadOf({ workload: { kind: 'tpcc', warehouses: 1 }, seed: 1 }).lockCount).toBe(6_042);
  });

  it('draws the standard mix, with about 86.5 % exclusive lock requests', () => {
    const n = 30_000;
    const { shared, total, byType, maxLocks, locksByType } = draw(tpcc, n);
    expect(Math.abs((total - shared) / total - 0.865) / 0.865).toBeLessThan(0.01);
    const expected: Record<string, number> = { NEW_ORDER: 45, PAYMENT: 43, ORDER_STATUS: 4, DELIVERY: 4, STOCK_LEVEL: 4 };
    for (const [type, pct] of Object.entries(expected)) expect(Math.abs((byType.get(type) ?? 0) / n - pct / 100)).toBeLessThan(0.005);
    expect(maxLocks).toBeLessThanOrEqual(MAX_TXN_LOCKS);
    // FissLock §7.4: NewOrder takes ~14 locks on average, Payment ~4; our mapping takes ~12 and 3.
    expect(locksByType.get('NEW_ORDER')! / byType.get('NEW_ORDER')!).toBeGreaterThan(11);
    expect(locksByType.get('PAYMENT')! / byType.get('PAYMENT')!).toBe(3);
  });

  it('tpcc long reads: CUSTOMER_SCAN at rate γ takes the table lock exclusive; writers of customers take it shared, first', () => {
    const w = txnWorkloadOf({ workload: { kind: 'tpcc', warehouses: 4, longReads: { probability: 0.05, scanNs: 1_000, slots: 3 } }, seed: 9 });
    const plain = txnWorkloadOf({ workload: { kind: 'tpcc', warehouses: 4 }, seed: 9 });
    expect(w.lockCount).toBe(plain.lockCount + 4);
    const streams = Array.from({ length: 8 }, (_, i) => w.stream(`1/${i}`));
    let scans = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const t = streams[i % 8]!.next();
      const tableLocks = t.locks.filter((l) => l.lock < 4);
      if (t.type === 'CUSTOMER_SCAN') {
        scans++;
        expect(t).toMatchObject({ locks: [{ mode: 'exclusive' }], executeNs: 1_000, slots: 3 });
        expect(t.locks[0]!.lock).toBeLessThan(4);
      } else if (t.type === 'PAYMENT' || t.type === 'DELIVERY') {
        expect(tableLocks).toHaveLength(1);
        expect(tableLocks[0]!.mode).toBe('shared');
        expect(t.locks[0]).toBe(tableLocks[0]);
      } else expect(tableLocks).toHaveLength(0);
    }
    expect(Math.abs(scans / n - 0.05)).toBeLessThan(0.005);
  });
});
