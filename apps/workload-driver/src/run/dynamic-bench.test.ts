import { describe, expect, it, vi } from 'vitest';
import { readWorkload } from '../cli/args.js';
import { benchCommand } from '../commands/bench.js';
import { readDynamicWorkload } from './dynamic-bench.js';

const DEFAULTS = { clients: 8, locks: 1000, readRatio: 0, distribution: 'uniform', operations: 10_000 };

describe('bench --workload dynamic', () => {
  it("takes FissLock's settings: 1 M locks, 2 500 hot, half the requests, a move every 300 ms, four periods", () => {
    const values = { workload: 'dynamic' };
    const { spec, reader } = readWorkload(values, DEFAULTS);
    const out = readDynamicWorkload(values, reader, spec);
    expect(reader.problems).toEqual([]);
    expect(out.tickMs).toBe(50);
    expect(out.spec).toMatchObject({ locks: 1_000_000, durationMs: 1_200, hotspot: { hotLocks: 2_500, hotShare: 0.5, moveEveryMs: 300 } });
    expect(out.spec.operations).toBeUndefined();
    const bad = { workload: 'micro', 'hot-locks': '3' };
    const second = readWorkload(bad, DEFAULTS);
    readDynamicWorkload(bad, second.reader, second.spec);
    expect(second.reader.problems).toEqual(['--hot-locks applies to --workload dynamic']);
  });

  it('reports a timeline whose ticks account for the granted acquires', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const code = await benchCommand(['--protocol', 'caslock', '--workload', 'dynamic', '--locks', '20000', '--hot-locks', '100', '--move-every-ms', '0.2', '--tick-ms', '0.05', '--clients', '8', '--operations', '3000', '--json']);
      expect(code).toBe(0);
      const report = JSON.parse(String(log.mock.calls.at(-1)![0])) as { acquires: number; timeline: { startMs: number; acquires: number }[] };
      const perTick = report.timeline.map((t) => t.acquires);
      // every granted acquire falls in exactly one tick of 0.05 ms from the first event
      expect(perTick.reduce((a, b) => a + b, 0)).toBe(report.acquires);
      expect(report.timeline.slice(0, 2).map((t) => t.startMs)).toEqual([0, 0.05]);
      expect(perTick.length).toBeGreaterThanOrEqual(4);
    } finally {
      log.mockRestore();
    }
  }, 60_000);
});
