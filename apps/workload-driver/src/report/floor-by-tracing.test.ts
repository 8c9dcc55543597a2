import { describe, expect, it } from 'vitest';
import type { BenchReport } from './bench-report.js';
import { describeFloorByTracing, tracedFloorRows } from './floor-by-tracing.js';

const phase = (ratioP50: number, ratioMean: number) => ({ p50Us: 1, meanUs: 1, roundTrips: 1, floorUs: 1, floorMeanUs: 1, ratioP50, ratioMean });
/** Only the fields the block reads: a report's protocol, floor phases and tracing. */
function report(protocol: string, ratio: number | undefined, floor: { acquire: [number, number]; operation?: [number, number] } | undefined): BenchReport {
  return {
    protocol,
    ...(floor ? { floor: { acquire: phase(...floor.acquire), ...(floor.operation ? { operation: phase(...floor.operation) } : {}) } } : {}),
    ...(ratio === undefined ? {} : { tracing: { ratio, exporter: ratio === 0 ? 'none' : 'sink' } }),
  } as unknown as BenchReport;
}

describe('floor by tracing setting', () => {
  it("sets each protocol's floor ratios side by side per setting: acquire+release for RDMA, the acquire for switch locks", () => {
    const reports = [
      report('caslock', 0, { acquire: [1.1, 1.2], operation: [1.3, 1.4] }),
      report('caslock', 0.01, { acquire: [1.2, 1.3], operation: [1.5, 1.6] }),
      report('fisslock', 0, { acquire: [1.25, 1.35] }),
      report('fisslock', 0.01, undefined),
    ];
    expect(tracedFloorRows(reports)).toStrictEqual([
      { protocol: 'caslock', ratio: 0, phase: 'operation', ratioP50: 1.3, ratioMean: 1.4 },
      { protocol: 'caslock', ratio: 0.01, phase: 'operation', ratioP50: 1.5, ratioMean: 1.6 },
      { protocol: 'fisslock', ratio: 0, phase: 'acquire', ratioP50: 1.25, ratioMean: 1.35 },
    ]);
    expect(describeFloorByTracing(reports).split('\n')).toStrictEqual([
      'uncontended ratio to the floor, p50 (mean), by tracing: tracing off | 1 % sampled',
      '  caslock acq+rel       1.3× (1.4×) | 1.5× (1.6×)',
      '  fisslock acquire      1.25× (1.35×) | no floor',
    ]);
  });

  it('shows the median over rounds when the floor was measured in rounds (the figure to judge)', () => {
    const spread = (median: number) => ({ median, min: median - 0.5, max: median + 0.5 });
    const rounds = { ...phase(1.9, 2.1), roundRatioP50: spread(1.2), roundRatioMean: spread(1.4) };
    const withRounds = { protocol: 'caslock', floor: { acquire: rounds, operation: rounds }, tracing: { ratio: 0, exporter: 'none' } } as unknown as BenchReport;
    expect(tracedFloorRows([withRounds])).toStrictEqual([{ protocol: 'caslock', ratio: 0, phase: 'operation', ratioP50: 1.9, ratioMean: 2.1, byRound: { ratioP50: 1.2, ratioMean: 1.4 } }]);
    expect(describeFloorByTracing([withRounds]).split('\n')).toStrictEqual(['uncontended ratio to the floor, median over rounds, p50 (mean), by tracing: tracing off', '  caslock acq+rel       1.2× (1.4×)']);
  });

  it('leaves out runs without a tracing setting', () => {
    expect(tracedFloorRows([report('caslock', undefined, { acquire: [1, 1], operation: [1, 1] })])).toStrictEqual([]);
  });
});
