import { describe, expect, it } from 'vitest';
import { NEMESIS_FAULTS, parseFaults, planSchedule } from './schedule.js';
import type { ScheduleOptions } from './schedule.js';

const base: ScheduleOptions = {
  seed: 7,
  faults: ['kill', 'pause', 'partition'],
  durationMs: 60_000,
  intervalMs: 5_000,
  faultDurationMs: 3_000,
  quietMs: 4_000,
  targets: { compute: ['compute-2', 'compute-3'], memory: 'memory-0', switch: 'switch-4', coordinator: 'coordinator-5', nats: 'nats' },
};

describe('planSchedule', () => {
  it('gives the same schedule for the same seed, and another for another seed', () => {
    expect(planSchedule(base)).toStrictEqual(planSchedule(base));
    expect(planSchedule({ ...base, seed: 8 })).not.toStrictEqual(planSchedule(base));
  });

  it('puts faults one after another inside the quiet margins, with lengths and gaps around the means', () => {
    const plan = planSchedule(base);
    expect(plan.length).toBeGreaterThanOrEqual(3);
    expect(plan[0]!.atMs).toBe(4_000);
    for (const [i, f] of plan.entries()) {
      expect(f.id).toBe(`f${i + 1}`);
      expect(f.durationMs).toBeGreaterThanOrEqual(1_500);
      expect(f.durationMs).toBeLessThanOrEqual(4_500);
      expect(f.atMs + f.durationMs).toBeLessThanOrEqual(56_000);
      const next = plan[i + 1];
      if (next) expect(next.atMs - (f.atMs + f.durationMs)).toBeGreaterThanOrEqual(2_500);
    }
    expect(plan.every((f) => ['kill', 'pause', 'partition'].includes(f.kind))).toBe(true);
    expect(plan.every((f) => f.target === 'compute-2' || f.target === 'compute-3')).toBe(true);
  });

  it('never aims a fault at a compute node killed earlier in the schedule, and stops when only such faults are left', () => {
    const plan = planSchedule({ ...base, faults: ['kill', 'pause'], durationMs: 200_000 });
    const killedAt = new Map<string, number>();
    for (const [i, f] of plan.entries()) {
      expect(killedAt.has(f.target), `${f.id} ${f.kind} ${f.target}`).toBe(false);
      if (f.kind === 'kill') killedAt.set(f.target, i);
    }
    expect(killedAt.size).toBe(2);
    expect(plan.at(-1)!.kind).toBe('kill'); // both targets gone: nothing left to inject
    expect(plan.at(-1)!.atMs + plan.at(-1)!.durationMs).toBeLessThan(150_000);
  });

  it('aims each fixed-target fault at its process', () => {
    const plan = planSchedule({ ...base, faults: ['memory-restart', 'switch-loss', 'coordinator-kill', 'nats-restart'], durationMs: 200_000 });
    const targets = Object.fromEntries(plan.map((f) => [f.kind, f.target]));
    expect(targets).toStrictEqual({ 'memory-restart': 'memory-0', 'switch-loss': 'switch-4', 'coordinator-kill': 'coordinator-5', 'nats-restart': 'nats' });
  });
});

describe('parseFaults', () => {
  it('takes every known fault and lists every unknown one', () => {
    const problems: string[] = [];
    expect(parseFaults(NEMESIS_FAULTS.join(','), problems)).toStrictEqual([...NEMESIS_FAULTS]);
    expect(problems).toStrictEqual([]);
    parseFaults('kill,explode,pause,melt', problems);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/unknown fault "explode"/);
    parseFaults(' , ', problems);
    expect(problems[2]).toMatch(/expected one or more/);
  });
});
