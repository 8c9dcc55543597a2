import { describe, expect, it } from 'vitest';
import { checkSerializability } from './serializability.js';
import type { SerialTxn } from './serializability.js';

const x = (lock: number, acquiredNs: number, releasedNs: number) => ({ lock, mode: 'exclusive' as const, acquiredNs, releasedNs });
const s = (lock: number, acquiredNs: number, releasedNs: number) => ({ lock, mode: 'shared' as const, acquiredNs, releasedNs });

describe('checkSerializability', () => {
  it('accepts two-phase transactions on shared locks', () => {
    const txns: SerialTxn[] = [
      { id: 'T1', holds: [x(1, 0, 10), x(2, 5, 10)] },
      { id: 'T2', holds: [x(1, 10, 20), s(2, 12, 20)] },
      { id: 'T3', holds: [s(2, 13, 21), x(3, 13, 21)] },
      { id: 'T4', holds: [x(2, 21, 30), x(3, 22, 30)] },
    ];
    const report = checkSerializability(txns);
    expect(report.ok).toBe(true);
    expect(report.cycle).toBeUndefined();
    expect(report.edges).toBeGreaterThan(0);
  });

  it('ignores shared-shared overlaps: readers do not order each other', () => {
    const report = checkSerializability([
      { id: 'R1', holds: [s(1, 0, 10), s(2, 20, 30)] },
      { id: 'R2', holds: [s(1, 5, 15), s(2, 0, 25)] },
    ]);
    expect(report).toMatchObject({ ok: true, edges: 0 });
  });

  it('finds the cycle a transaction that releases early closes', () => {
    // T1 takes and frees A (lock 1) before taking B (lock 2); T2 takes A and B in between.
    const report = checkSerializability([
      { id: 'T1', holds: [x(1, 0, 5), x(2, 30, 40)] },
      { id: 'T2', holds: [x(1, 6, 20), x(2, 7, 20)] },
      { id: 'T3', holds: [s(9, 0, 1)] },
    ]);
    expect(report.ok).toBe(false);
    expect(report.cycle).toHaveLength(2);
    const steps = report.cycle!.map((e) => `${e.from}-${e.lock}->${e.to}`).sort();
    expect(steps).toEqual(['T1-1->T2', 'T2-2->T1']);
  });

  it('finds a cycle through readers and a chain of three', () => {
    // T1 → T2 on lock 1 (X then S), T2 → T3 on lock 2 (S then X), T3 → T1 on lock 3 (X then X).
    const report = checkSerializability([
      { id: 'T1', holds: [x(1, 0, 10), x(3, 50, 60)] },
      { id: 'T2', holds: [s(1, 11, 20), s(2, 12, 20)] },
      { id: 'T3', holds: [x(2, 21, 30), x(3, 22, 30)] },
    ]);
    expect(report.ok).toBe(false);
    expect(report.cycle!.map((e) => e.from).sort()).toEqual(['T1', 'T2', 'T3']);
  });
});
