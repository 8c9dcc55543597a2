import { describe, expect, it } from 'vitest';
import type { FloorReport } from '../run/transport-floor.js';
import { describeFloor } from './floor-text.js';

const phase = (roundTrips: number) => ({ p50Us: 150, meanUs: 160, roundTrips, floorUs: 100 * roundTrips, floorMeanUs: 120 * roundTrips, ratioP50: roundTrips === 0 ? 0 : 1.5, ratioMean: roundTrips === 0 ? 0 : 1.33 });
/** Only the fields the text reads. */
const floor = (roundTrips: number): FloorReport =>
  ({ transport: 'grpc', floorPath: 'grpc-memory-node', rttUs: 100, rttMeanUs: 120, grpcRttUs: 100, grpcRttMeanUs: 120, natsRttUs: 250, natsRttMeanUs: 300, operations: 300, acquire: phase(roundTrips), release: phase(roundTrips) }) as unknown as FloorReport;

describe('describeFloor', () => {
  it('sets a verb protocol against its verbs × the gRPC round trip', () => {
    expect(describeFloor(floor(1)).split('\n')[0]).toBe('uncontended (300 ops, one client): acquire p50 150.0 µs (mean 160.0) = 1.5× (mean 1.33×) of 1.00 verb × 100.0 µs (mean 120.0) gRPC');
  });

  it('gives no ratio to a protocol whose fast path has no verbs (a lock server: rpc, traditional)', () => {
    const lines = describeFloor(floor(0)).split('\n');
    expect(lines[0]).toBe('uncontended (300 ops, one client): acquire p50 150.0 µs (mean 160.0); no verbs on its fast path, so no ratio to the gRPC floor');
    expect(lines[1]).toBe('  release p50 150.0 µs (mean 160.0); no verbs on its fast path, so no ratio to the gRPC floor');
    expect(lines.join('\n')).not.toMatch(/0×/);
  });
});
