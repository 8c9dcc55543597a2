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

  it('leaves out runs without a tracing setting', () => {
    expect(tracedFloorRows([report('caslock', undefined, { acquire: [1, 1], operation: [1, 1] })])).toStrictEqual([]);
  });
});
