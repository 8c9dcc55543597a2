import { describe, expect, it } from 'vitest';
import { CDF_FRACTIONS, RunStats, summarize } from './results.js';

function filled(fromUs: number, toUs: number): RunStats {
  const stats = new RunStats();
  for (let us = fromUs; us <= toUs; us++) {
    stats.recordAcquire(us * 1000);
    stats.recordRelease(us * 100);
  }
  return stats;
}

describe('RunStats and summarize', () => {
  it('reports throughput, percentiles in µs at 3 significant digits, and counts', () => {
    const stats = filled(1, 1000);
    stats.recordFailure('acquire', 'LOCK_TIMEOUT');
    stats.recordFailure('acquire', 'LOCK_TIMEOUT');
    stats.recordFailure('release', 'FABRIC_ACCESS');
    const summary = summarize(stats, 2e9);
    expect(summary.throughput).toBe(500);
    expect(summary.acquires).toBe(1000);
    expect(summary.releases).toBe(1000);
    expect(summary.failures).toBe(3);
    expect(summary.failuresByCode).toEqual({ FABRIC_ACCESS: 1, LOCK_TIMEOUT: 2 });
    const near = (value: number, expected: number) => expect(Math.abs(value - expected) / expected).toBeLessThan(0.002);
    near(summary.latencyUs.p50, 500);
    near(summary.latencyUs.p90, 900);
    near(summary.latencyUs.p99, 990);
    near(summary.latencyUs.p999, 999);
    near(summary.latencyUs.max, 1000);
    expect(summary.latencyUs.max).toBeGreaterThanOrEqual(1000);
    near(summary.latencyUs.mean, 500.5);
    near(summary.releaseLatencyUs.p50, 50);
    expect(summary.verbs).toBeUndefined();
  });

  it('samples the acquire-latency CDF at every fixed fraction, rising, from min to max', () => {
    const summary = summarize(filled(1, 1000), 1e9);
    const cdf = summary.latencyCdfUs ?? [];
    expect(cdf.map((p) => p.fraction)).toEqual(CDF_FRACTIONS);
    for (let i = 1; i < cdf.length; i++) expect(cdf[i]!.us).toBeGreaterThanOrEqual(cdf[i - 1]!.us);
    expect(cdf[0]!.us).toBeLessThan(1.01);
    expect(cdf.find((p) => p.fraction === 0.5)?.us).toBe(summary.latencyUs.p50);
    expect(cdf.at(-1)?.us).toBe(summary.latencyUs.max);
    expect(summarize(new RunStats(), 0).latencyCdfUs).toEqual([]);
  });

  it('normalises verb counters per operation', () => {
    const summary = summarize(filled(1, 100), 1e9, { cas: 250, read: 100 });
    expect(summary.verbs).toEqual({ counts: { cas: 250, read: 100 }, total: 350, perOp: { cas: 2.5, read: 1 } });
  });

  it('summarises an empty run without dividing by zero', () => {
    const summary = summarize(new RunStats(), 0, { cas: 3 });
    expect(summary.throughput).toBe(0);
    expect(summary.latencyUs).toEqual({ p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0 });
    expect(summary.verbs?.perOp).toEqual({ cas: 0 });
    expect(() => summarize(new RunStats(), -1)).toThrow(RangeError);
  });

  it('merges across clients to the same figures as one RunStats', () => {
    const whole = filled(1, 1000);
    const merged = RunStats.mergeAll([filled(1, 300), filled(301, 1000)]);
    expect(summarize(merged, 1e9)).toEqual(summarize(whole, 1e9));
  });

  it('crosses the wire as JSON and merges on the other side', () => {
    const a = filled(1, 500);
    a.recordFailure('acquire', 'LOCK_TIMEOUT');
    const b = filled(501, 1000);
    b.recordFailure('acquire', 'LOCK_TIMEOUT');
    const wire = JSON.parse(JSON.stringify([a.toWire(), b.toWire()])) as ReturnType<RunStats['toWire']>[];
    expect(typeof wire[0]?.acquireLatencyNs).toBe('string');
    const merged = RunStats.mergeAll(wire.map((w) => RunStats.fromWire(w)));
    const local = RunStats.mergeAll([filled(1, 500), filled(501, 1000)]);
    local.recordFailure('acquire', 'LOCK_TIMEOUT');
    local.recordFailure('acquire', 'LOCK_TIMEOUT');
    expect(summarize(merged, 1e9)).toEqual(summarize(local, 1e9));
    // A decoded histogram keeps growing when larger values arrive later.
    merged.recordAcquire(60e9);
    expect(summarize(merged, 1e9).latencyUs.max).toBeGreaterThan(59e6);
  });

  it('rounds fractional and clamps negative latencies, and rejects non-finite ones', () => {
    const stats = new RunStats();
    stats.recordAcquire(1500.4);
    stats.recordAcquire(-3);
    expect(stats.acquireLatencyNs.maxValue).toBe(1500);
    expect(stats.acquireLatencyNs.minNonZeroValue).toBe(1500);
    expect(() => stats.recordAcquire(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
