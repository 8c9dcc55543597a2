import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '@lockfabric/check';
import { RunStats, VerbAccounting } from '@lockfabric/workloads';
import { latencyStatsOf, planRounds, roundRatios, runRounds, spreadOf } from './floor-rounds.js';
import type { RoundOptions } from './floor-rounds.js';
import { floorFromRounds } from './transport-floor.js';
import type { FloorSamples, ProbeRound } from './transport-floor.js';

describe('planRounds', () => {
  it('splits both totals over the rounds, the first rounds taking the remainder', () => {
    expect(planRounds(300, 1_000, 10)).toStrictEqual({ operations: Array(10).fill(30), floorRoundTrips: Array(10).fill(100) });
    expect(planRounds(7, 10, 3)).toStrictEqual({ operations: [3, 2, 2], floorRoundTrips: [4, 3, 3] });
  });

  it('never plans a round without an operation, nor fewer than one round', () => {
    expect(planRounds(3, 1_000, 10).operations).toStrictEqual([1, 1, 1]);
    expect(planRounds(5, 100, 0).operations).toStrictEqual([5]);
  });
});

describe('runRounds', () => {
  const steps = (log: string[]) => ({
    floor: async (n: number, k: number) => (log.push(`floor ${k}:${n}`), k),
    probe: async (n: number, k: number) => (log.push(`probe ${k}:${n}`), -k),
  });

  it('alternates: each round its floor, then its probe', async () => {
    const log: string[] = [];
    const out = await runRounds({ operations: [2, 1], floorRoundTrips: [5, 4] }, steps(log));
    expect(log).toStrictEqual(['floor 0:5', 'probe 0:2', 'floor 1:4', 'probe 1:1']);
    expect(out).toStrictEqual({ floors: [0, 1], probes: [-0, -1] });
  });

  it('mutantBlocks: every floor, then every probe (the old method), results still by round', async () => {
    const log: string[] = [];
    const out = await runRounds({ operations: [2, 1], floorRoundTrips: [5, 4] }, steps(log), { mutantBlocks: true });
    expect(log).toStrictEqual(['floor 0:5', 'floor 1:4', 'probe 0:2', 'probe 1:1']);
    expect(out).toStrictEqual({ floors: [0, 1], probes: [-0, -1] });
  });
});

describe('round ratio arithmetic', () => {
  it('spreadOf: median (middle two averaged for an even count), min and max to 0.01', () => {
    expect(spreadOf([3, 1, 2])).toStrictEqual({ median: 2, min: 1, max: 3 });
    expect(spreadOf([4, 1, 2, 3])).toStrictEqual({ median: 2.5, min: 1, max: 4 });
    expect(spreadOf([1 / 3])).toStrictEqual({ median: 0.33, min: 0.33, max: 0.33 });
    expect(spreadOf([])).toStrictEqual({ median: 0, min: 0, max: 0 });
  });

  it("roundRatios: each round over round trips × its own floor, medians over medians and means over means", () => {
    const rounds = [
      { latency: { p50: 120, mean: 200 }, rtt: { p50: 60, mean: 100 } }, // 1 and 1
      { latency: { p50: 300, mean: 300 }, rtt: { p50: 50, mean: 50 } }, // 3 and 3
      { latency: { p50: 100, mean: 150 }, rtt: { p50: 25, mean: 50 } }, // 2 and 1.5
      { latency: { p50: 100, mean: 150 }, rtt: { p50: 0, mean: 0 } }, // no floor: left out
    ];
    expect(roundRatios(rounds, 2)).toStrictEqual({ roundRatioP50: { median: 2, min: 1, max: 3 }, roundRatioMean: { median: 1.5, min: 1, max: 3 } });
  });
});

describe('latencyStatsOf', () => {
  const e = (client: string, op: 'acquire' | 'release', phase: 'invoke' | 'ok' | 'fail', timeNs: number): HistoryEvent => ({ client, lock: 1, mode: 'exclusive', op, phase, timeNs });

  it('times each operation from its invoke to its ok, per client; failures are not latencies', () => {
    const history = [
      e('1/0', 'acquire', 'invoke', 1_000),
      e('1/1', 'acquire', 'invoke', 1_100),
      e('1/0', 'acquire', 'ok', 1_300),
      e('1/1', 'acquire', 'fail', 1_900),
      e('1/0', 'release', 'invoke', 1_300),
      e('1/0', 'release', 'ok', 1_500),
      e('1/1', 'acquire', 'invoke', 2_000),
      e('1/1', 'acquire', 'ok', 3_000),
    ];
    const stats = latencyStatsOf(history);
    expect([stats.acquires, stats.releases]).toStrictEqual([2, 1]);
    // the failed acquire's 800 ns is no latency: 300 and 1 000 ns are
    expect([stats.acquireLatencyNs.minNonZeroValue, stats.acquireLatencyNs.maxValue, stats.acquireLatencyNs.mean]).toStrictEqual([300, 1_000, 650]);
    expect(stats.releaseLatencyNs.maxValue).toBe(200);
  });
});

/**
 * A machine whose load triples once, part-way through the measurement: every round trip and every
 * operation takes its base time × the load at its start, on one virtual clock. The protocol's
 * acquire is 2 floors, its release 1, whatever the load.
 */
function loadedMachine(jumpAtUs: number) {
  let nowUs = 0;
  const take = (baseUs: number) => {
    const us = baseUs * (nowUs < jumpAtUs ? 1 : 3);
    nowUs += us;
    return us;
  };
  const FLOOR_US = 50;
  return {
    floor: async (roundTrips: number): Promise<FloorSamples> => ({ grpcUs: Array.from({ length: roundTrips }, () => take(FLOOR_US)), natsUs: [] }),
    probe: async (operations: number): Promise<ProbeRound> => {
      const stats = new RunStats();
      const accounting = new VerbAccounting();
      const start = nowUs;
      for (let i = 0; i < operations; i++) {
        stats.recordAcquire(take(2 * FLOOR_US) * 1_000);
        stats.recordRelease(take(FLOOR_US) * 1_000);
      }
      accounting.add('acquire', 'cas', operations);
      accounting.add('release', 'write', operations);
      return { stats, accounting, elapsedNs: (nowUs - start) * 1_000 };
    },
  };
}

describe('a floor that jumps between rounds', () => {
  // 10 rounds of 100 round trips and 100 operations: 20 ms a round at load 1; the load triples at 90 ms
  const measure = async (options: RoundOptions) => {
    const { floors, probes } = await runRounds(planRounds(1_000, 1_000, 10), loadedMachine(90_000), options);
    return floorFromRounds('rdma', floors, probes, { switchEchoes: undefined });
  };

  it('interleaved: every whole round gives the true ratio, so the median is it; the jump shows in the spread', async () => {
    const floor = await measure({});
    expect(floor.acquire.roundRatioP50?.median).toBe(2);
    expect(floor.acquire.roundRatioMean?.median).toBe(2);
    expect(floor.release?.roundRatioP50?.median).toBe(1);
    expect(floor.operation?.roundRatioP50?.median).toBe(1.5);
    expect(floor.operation?.roundRatioMean?.median).toBe(1.5);
    // the one round the jump fell in
    expect(floor.acquire.roundRatioP50?.min).toBe(2);
    expect(floor.acquire.roundRatioP50?.max).toBeGreaterThan(2);
    expect(floor.rounds).toMatchObject({ count: 10, operations: Array(10).fill(100), floorRoundTrips: Array(10).fill(100) });
    expect(floor.rounds?.rttUs).toStrictEqual([50, 50, 50, 50, 50, 150, 150, 150, 150, 150]);
    expect(floor.operations).toBe(1_000);
    expect(floor.verbsPerAcquire).toMatchObject({ cas: 1, total: 1 });
  });

  it('catches the block method (mutant): every floor at the light load, most probes at the heavy one', async () => {
    const floor = await measure({ mutantBlocks: true });
    expect(floor.rounds?.rttUs).toStrictEqual(Array(10).fill(50));
    expect(floor.acquire.roundRatioP50?.median).toBe(6);
    expect(floor.operation?.roundRatioMean?.median).toBeGreaterThan(3);
  });
});
