import { describe, expect, it } from 'vitest';
import type { RunSummary } from '@lockfabric/workloads';
import { floorReport, processorTimePerOperation } from './transport-floor.js';

const latency = (p50: number, mean: number) => ({ p50, p90: p50, p99: p50, p999: p50, max: p50, mean });
const summary = { acquires: 100, latencyUs: latency(60, 80), releaseLatencyUs: latency(40, 50) } as unknown as RunSummary;
const verbs = (total: number) => ({ read: 0, write: 0, cas: total, faa: 0, maskedCas: 0, maskedFaa: 0, total });
const memoryNode = { streamMsgsPerSec: 10_000, verbsPerSec: 9_000, ratio: 0.9 };

describe('floorReport', () => {
  it('RDMA family: each phase and the whole operation against verbs × the gRPC round trip', () => {
    const floor = floorReport('rdma', summary, { verbsPerAcquire: verbs(1), verbsPerRelease: verbs(2) }, { grpcRttUs: 20, natsRttUs: 100, memoryNode });
    expect(floor).toMatchObject({ transport: 'grpc', rttUs: 20, operations: 100, memoryNode });
    expect(floor.acquire).toMatchObject({ roundTrips: 1, floorUs: 20, ratioP50: 3, ratioMean: 4 });
    expect(floor.release).toMatchObject({ roundTrips: 2, floorUs: 40, ratioP50: 1, ratioMean: 1.25 });
    // acquire+release: p50 60+40 and mean 80+50 over 3 verbs × 20 µs
    expect(floor.operation).toMatchObject({ p50Us: 100, meanUs: 130, roundTrips: 3, floorUs: 60, ratioP50: 1.67, ratioMean: 2.17 });
  });

  it('switch family: one NATS exchange per acquire, no release or operation floor', () => {
    const floor = floorReport('switch', summary, { verbsPerAcquire: verbs(0), verbsPerRelease: verbs(0) }, { grpcRttUs: 20, natsRttUs: 50 });
    expect(floor).toMatchObject({ transport: 'nats', rttUs: 50, acquire: { roundTrips: 1, floorUs: 50, ratioP50: 1.2 } });
    expect(floor.release).toBeUndefined();
    expect(floor.operation).toBeUndefined();
  });
});

describe('processorTimePerOperation', () => {
  it('subtracts the idle background rate over the probe and divides by the operations', () => {
    const at = (compute: number, memory: number) => ({ compute, memory });
    // idle: 1 000 µs of compute and 500 µs of memory time over 500 ms; probe: 2 s, 100 operations
    const idle = { startUs: at(0, 0), endUs: at(1_000, 500), wallUs: 500_000 };
    const probe = { startUs: at(10_000, 20_000), endUs: at(24_000, 30_000), wallUs: 2_000_000 };
    expect(processorTimePerOperation(idle, probe, 100)).toStrictEqual({ compute: 100, memory: 80 });
    // a busier idle interval than the probe gives 0, never a negative time
    expect(processorTimePerOperation({ ...idle, endUs: at(100_000, 100_000) }, probe, 100)).toStrictEqual({ compute: 0, memory: 0 });
  });
});
