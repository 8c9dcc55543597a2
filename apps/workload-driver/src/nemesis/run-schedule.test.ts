import { describe, expect, it } from 'vitest';
import type { AppliedFault } from './executor.js';
import { runSchedule } from './run-schedule.js';
import type { PlannedFault } from './schedule.js';

const kill = (id: string, atMs: number): PlannedFault => ({ id, kind: 'kill', target: `compute-${id}`, atMs, durationMs: 1_000 });
const schedule = [kill('f1', 3_000), kill('f2', 6_000), kill('f3', 9_000), kill('f4', 12_000)];

/** A virtual wall clock: sleeping and healing move it, nothing else. */
function harness(healMs: number, workloadEndsAtMs = Infinity) {
  let now = 0;
  return {
    nowMs: () => now,
    sleep: async (ms: number) => void (now += ms),
    apply: async (fault: PlannedFault): Promise<AppliedFault> => {
      const startNs = now * 1e6;
      now += fault.durationMs + healMs;
      return { ...fault, startNs, endNs: now * 1e6, detail: 'killed; restarted' };
    },
    workloadOver: () => now >= workloadEndsAtMs,
  };
}

describe('runSchedule', () => {
  it('injects every fault at its time when heals are quick', async () => {
    const { applied, skipped } = await runSchedule(schedule, { startMs: 0, durationMs: 20_000, quietMs: 3_000 }, harness(500));
    expect(applied.map((f) => [f.id, f.startNs / 1e6])).toStrictEqual([['f1', 3_000], ['f2', 6_000], ['f3', 9_000], ['f4', 12_000]]);
    expect(skipped).toStrictEqual([]);
  });

  it('skips the faults a slow heal pushed into the closing quiet stretch, and says why', async () => {
    // Each restart takes 7 s: f2 starts at 11 s instead of 6, f3 would start at 19 s (> 20 − 3 s).
    const { applied, skipped } = await runSchedule(schedule, { startMs: 0, durationMs: 20_000, quietMs: 3_000 }, harness(7_000));
    expect(applied.map((f) => f.id)).toStrictEqual(['f1', 'f2']);
    expect(skipped.map((f) => f.id)).toStrictEqual(['f3', 'f4']);
    expect(skipped[0]!.reason).toMatch(/^the faults before it healed slowly: it would start 10000 ms late, inside the closing quiet stretch$/);
  });

  it('skips what is left once the workload has ended', async () => {
    const { applied, skipped } = await runSchedule(schedule, { startMs: 0, durationMs: 60_000, quietMs: 3_000 }, harness(500, 8_000));
    expect(applied.map((f) => f.id)).toStrictEqual(['f1', 'f2']);
    expect(skipped.map((f) => [f.id, f.reason])).toStrictEqual([
      ['f3', 'the workload had ended'],
      ['f4', 'the workload had ended'],
    ]);
  });
});
