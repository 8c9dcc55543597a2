import { describe, expect, it } from 'vitest';
import { runCli } from './cli.js';

// `bench --tick-ms`: the run in fixed ticks (ShiftLock Fig. 13 and FissLock's dynamic workload plot
// throughput over time). Every acquire of the run falls in exactly one tick.

describe('lockfabric bench --tick-ms', () => {
  it('ticks of the given width from the first event; their acquires add up to the run', async () => {
    const { code, stdout, stderr } = await runCli(['bench', '--protocol', 'dslr', '--clients', '8', '--operations', '3000', '--tick-ms', '0.25', '--json']);
    expect(code, stderr).toBe(0);
    const r = JSON.parse(stdout) as { acquires: number; timeline: { startMs: number; throughput: number; acquires: number }[] };
    expect(r.timeline.length).toBeGreaterThan(2);
    expect(r.timeline.map((t) => t.startMs).slice(0, 3)).toEqual([0, 0.25, 0.5]);
    expect(r.timeline.reduce((sum, t) => sum + t.acquires, 0)).toBe(r.acquires);
    // a full tick's rate is its acquires over its width
    expect(r.timeline[0]!.throughput).toBeCloseTo(r.timeline[0]!.acquires / 0.25e-3, 0);
  });

  it('a tick of zero is a configuration error', async () => {
    const { code, stderr } = await runCli(['bench', '--tick-ms', '0']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--tick-ms/);
  });
});
