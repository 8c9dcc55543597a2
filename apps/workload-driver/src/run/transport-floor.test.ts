import { describe, expect, it } from 'vitest';
import type { RunSummary } from '@lockfabric/workloads';
import { cpuPerMessage, floorReport, nicAgainstStream, pooledTransport, processorTimePerOperation } from './transport-floor.js';
import type { FloorRound } from './transport-floor.js';

const latency = (p50: number, mean: number) => ({ p50, p90: p50, p99: p50, p999: p50, max: p50, mean });
const summary = { acquires: 100, latencyUs: latency(60, 80), releaseLatencyUs: latency(40, 50) } as unknown as RunSummary;
const verbs = (total: number) => ({ read: 0, write: 0, cas: total, faa: 0, maskedCas: 0, maskedFaa: 0, total });
const memoryNode = { streamMsgsPerSec: 10_000, verbsPerSec: 9_000, ratio: 0.9 };

describe('floorReport', () => {
  // gRPC: median 20 µs, mean 40 µs; NATS in-CLI 50/100; NATS through the switch 60/80
  const rtts = { grpcRttUs: 20, grpcRttMeanUs: 40, natsRttUs: 50, natsRttMeanUs: 100 };
  const switchEcho = { rttUs: 60, rttMeanUs: 80, exchanges: 1_400 };

  it('RDMA family: p50 over verbs × the median gRPC round trip, mean over verbs × its mean', () => {
    const floor = floorReport('rdma', summary, { verbsPerAcquire: verbs(1), verbsPerRelease: verbs(2) }, { ...rtts, memoryNode });
    expect(floor).toMatchObject({ transport: 'grpc', floorPath: 'grpc-memory-node', rttUs: 20, rttMeanUs: 40, operations: 100, memoryNode });
    expect(floor.acquire).toMatchObject({ roundTrips: 1, floorUs: 20, floorMeanUs: 40, ratioP50: 3, ratioMean: 2 });
    expect(floor.release).toMatchObject({ roundTrips: 2, floorUs: 40, floorMeanUs: 80, ratioP50: 1, ratioMean: 0.63 });
    // acquire+release: p50 60+40 and mean 80+50 over 3 verbs × 20 (mean 40) µs
    expect(floor.operation).toMatchObject({ p50Us: 100, meanUs: 130, roundTrips: 3, floorUs: 60, floorMeanUs: 120, ratioP50: 1.67, ratioMean: 1.08 });
  });

  it('switch family: one exchange per acquire against the switch echo; both NATS floors reported', () => {
    const floor = floorReport('switch', summary, { verbsPerAcquire: verbs(0), verbsPerRelease: verbs(0) }, { ...rtts, switchEcho });
    expect(floor).toMatchObject({ transport: 'nats', floorPath: 'nats-switch-echo', rttUs: 60, rttMeanUs: 80, natsRttUs: 50, natsRttMeanUs: 100, switchEcho });
    expect(floor.acquire).toMatchObject({ roundTrips: 1, floorUs: 60, floorMeanUs: 80, ratioP50: 1, ratioMean: 1 });
    expect(floor.release).toBeUndefined();
    expect(floor.operation).toBeUndefined();
  });

  it('switch family without a switch echo: the in-CLI NATS exchange, named as such', () => {
    const floor = floorReport('switch', summary, { verbsPerAcquire: verbs(0), verbsPerRelease: verbs(0) }, rtts);
    expect(floor).toMatchObject({ floorPath: 'nats-in-cli', rttUs: 50, rttMeanUs: 100, acquire: { floorUs: 50, floorMeanUs: 100, ratioP50: 1.2, ratioMean: 0.8 } });
    expect(floor.switchEcho).toBeUndefined();
  });

  it('catches a mean ratio over the median floor (mutant): the figures differ whenever mean ≠ median', () => {
    const floor = floorReport('rdma', summary, { verbsPerAcquire: verbs(1), verbsPerRelease: verbs(2) }, rtts);
    const mutantRatioMean = Math.round((floor.acquire.meanUs / floor.acquire.floorUs) * 100) / 100; // the old mean / median-floor
    expect(mutantRatioMean).toBe(4);
    expect(floor.acquire.ratioMean).not.toBe(mutantRatioMean);
  });
});

describe('floorReport with rounds', () => {
  const rtts = { grpcRttUs: 20, grpcRttMeanUs: 40, natsRttUs: 50, natsRttMeanUs: 100 };
  const pair = (p50: number, mean: number) => ({ p50, mean });
  const round = (operations: number, grpc: number, echo: number): FloorRound => ({
    operations,
    floorRoundTrips: 100,
    acquire: pair(60, 80),
    release: pair(40, 40),
    grpc: pair(grpc, grpc),
    nats: pair(50, 50),
    switchEcho: pair(echo, echo),
  });

  it("divides each round by its own floor of the family's path; a round without operations has no ratio", () => {
    const rounds = [round(10, 20, 60), round(10, 30, 30), round(10, 60, 60), round(0, 1, 1)];
    const rdma = floorReport('rdma', summary, { verbsPerAcquire: verbs(1), verbsPerRelease: verbs(1) }, rtts, rounds);
    // acquire 60 over 20, 30, 60: 3, 2, 1
    expect(rdma.acquire).toMatchObject({ ratioP50: 3, roundRatioP50: { median: 2, min: 1, max: 3 } });
    // acquire+release 100 over 2 × (20, 30, 60), means 120 over the same
    expect(rdma.operation).toMatchObject({ roundRatioP50: { median: 1.67, min: 0.83, max: 2.5 }, roundRatioMean: { median: 2, min: 1, max: 3 } });
    expect(rdma.rounds).toStrictEqual({ count: 4, operations: [10, 10, 10, 0], floorRoundTrips: [100, 100, 100, 100], rttUs: [20, 30, 60, 1], rttMeanUs: [20, 30, 60, 1] });
    const sw = floorReport('switch', summary, { verbsPerAcquire: verbs(0), verbsPerRelease: verbs(0) }, { ...rtts, switchEcho: { rttUs: 60, rttMeanUs: 80, exchanges: 9 } }, rounds);
    // the switch echo of each round: 60 over 60, 30, 60
    expect(sw.acquire.roundRatioP50).toStrictEqual({ median: 1, min: 1, max: 2 });
    expect(sw.rounds?.rttUs).toStrictEqual([60, 30, 60, 1]);
  });

  it('without rounds (a report from before them) the fields are absent', () => {
    const floor = floorReport('rdma', summary, { verbsPerAcquire: verbs(1), verbsPerRelease: verbs(1) }, rtts);
    expect(floor.rounds).toBeUndefined();
    expect(floor.acquire.roundRatioP50).toBeUndefined();
  });
});

describe('pooledTransport', () => {
  it("pools every round's samples of each path into one median and mean", () => {
    const floors = [
      { grpcUs: [10, 30], natsUs: [100], switchEchoUs: [50] },
      { grpcUs: [20], natsUs: [200, 300], switchEchoUs: [70] },
    ];
    expect(pooledTransport(floors, 42)).toStrictEqual({ grpcRttUs: 20, grpcRttMeanUs: 20, natsRttUs: 200, natsRttMeanUs: 200, switchEcho: { rttUs: 70, rttMeanUs: 60, exchanges: 42 } });
    expect(pooledTransport([{ grpcUs: [5], natsUs: [] }], undefined)).toStrictEqual({ grpcRttUs: 5, grpcRttMeanUs: 5, natsRttUs: 0, natsRttMeanUs: 0 });
  });
});

describe('nicAgainstStream', () => {
  it("sets the run's verb rate on the measured node against the bare stream; nothing when it served none", () => {
    expect(nicAgainstStream('memory-0', { 'memory-0': 12_000, 'memory-1': 1 }, 15_000)).toStrictEqual({ node: 'memory-0', nicIops: 12_000, streamMsgsPerSec: 15_000, ratio: 0.8 });
    expect(nicAgainstStream('memory-0', { 'memory-1': 5 }, 15_000)).toBeUndefined();
    expect(nicAgainstStream('memory-0', undefined, 15_000)).toBeUndefined();
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

describe('cpuPerMessage', () => {
  it("divides each side's processor time over each phase by the phase's messages", () => {
    const echo = { start: { memory: 1_000, driver: 500 }, end: { memory: 21_000, driver: 30_500 } };
    const verb = { start: { memory: 21_000, driver: 30_500 }, end: { memory: 46_000, driver: 75_500 } };
    expect(cpuPerMessage(echo, verb, 1_000)).toStrictEqual({ cpuUsPerMessage: { memory: { echo: 20, verb: 25 }, driver: { echo: 30, verb: 45 } } });
  });

  it('gives nothing when a snapshot is missing (not Linux, a remote node) or no message was sent', () => {
    const some = { start: { memory: 0, driver: 0 }, end: { memory: 1, driver: 1 } };
    expect(cpuPerMessage({ start: undefined, end: some.end }, some, 10)).toStrictEqual({});
    expect(cpuPerMessage(some, { start: some.start, end: undefined }, 10)).toStrictEqual({});
    expect(cpuPerMessage(some, some, 0)).toStrictEqual({});
  });
});
