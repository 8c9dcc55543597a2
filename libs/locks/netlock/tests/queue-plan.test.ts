import { describe, expect, it } from 'vitest';
import { planHotLockQueues, planQueuesForSwitch } from '../src/index.js';
import type { TraceRequest } from '../src/index.js';

/** Lock `i` of `locks` asked `weight(i)` times, by requesters round-robin over `clients`. */
function trace(locks: number, clients: number, weight: (lock: number) => number): TraceRequest[] {
  const out: TraceRequest[] = [];
  for (let lock = 0; lock < locks; lock++) for (let n = 0; n < weight(lock); n++) out.push({ lock, requester: String(out.length % clients) });
  return out;
}

const skewed = trace(2_000, 16, (lock) => Math.max(1, Math.floor(2_000 / (lock + 1))));

describe('planHotLockQueues (NetLock’s offline queue allocation)', () => {
  it('puts the most requested locks in switch queues, within the slot budget, packed back to back', () => {
    const queues = planHotLockQueues(skewed, 256, 4_096);
    expect(queues.reduce((sum, q) => sum + q.size, 0)).toBeLessThanOrEqual(256);
    expect(queues.map((q) => q.lock)).toContain(0);
    let base = 0;
    for (const q of queues) {
      expect(q.base).toBe(base);
      expect(q.size).toBeGreaterThanOrEqual(1);
      expect(q.size).toBeLessThanOrEqual(16);
      base += q.size;
    }
  });

  it('respects the switch’s bound on hot locks and keeps the queues packed', () => {
    const queues = planHotLockQueues(trace(2_000, 1, (lock) => 2_000 - lock), 4_096, 10);
    expect(queues).toHaveLength(10);
    expect(queues.map((q) => q.base)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('a few evenly used locks are all hot, each with one slot per requester', () => {
    expect(planHotLockQueues(trace(3, 8, () => 80), 4_096, 4_096)).toEqual([
      { lock: 0, base: 0, size: 8 },
      { lock: 1, base: 8, size: 8 },
      { lock: 2, base: 16, size: 8 },
    ]);
  });

  it('sizes the plan for a running switch by its slot and hot-lock arrays', () => {
    const arrays: Record<string, number> = { 'netlock.qmode': 256, 'netlock.qstate': 4 };
    expect(planQueuesForSwitch(skewed, (name) => arrays[name] ?? 0)).toEqual(planHotLockQueues(skewed, 256, 4));
  });
});
