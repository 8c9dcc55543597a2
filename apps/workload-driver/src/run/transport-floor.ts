import type { RunSummary } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import type { BenchReport } from '../report/bench-report.js';

/** The raw round trips a live bench divides by, measured in the same run. */
export interface TransportFloor {
  readonly grpcRttUs: number;
  readonly natsRttUs: number;
}

/** One phase (acquire or release) of the uncontended probe against its floor. */
export interface PhaseFloor {
  readonly p50Us: number;
  readonly meanUs: number;
  /** Round trips the phase needs on the wire: verbs (RDMA family) or packet exchanges (switch family). */
  readonly roundTrips: number;
  /** roundTrips × the transport's bare round trip. */
  readonly floorUs: number;
  readonly ratioP50: number;
  readonly ratioMean: number;
}

/**
 * A protocol's uncontended latency against the transport it runs on: one client on
 * many locks, so every acquire and release is the protocol's fast path. RDMA locks pay one gRPC
 * stream round trip per verb; switch locks one NATS round trip per acquire (request out, grant
 * back; their release is one packet with no answer, so it has no floor).
 */
export interface FloorReport {
  readonly transport: 'grpc' | 'nats';
  readonly rttUs: number;
  readonly grpcRttUs: number;
  readonly natsRttUs: number;
  readonly operations: number;
  readonly acquire: PhaseFloor;
  readonly release?: PhaseFloor;
}

/** The probe's workload: one client, sequential operations on 1 000 uniform locks, no think time or critical section. */
export function floorProbeSpec(operations: number, seed: number): WorkloadSpec {
  return { clients: 1, locks: 1_000, readRatio: 0, distribution: 'uniform', operations, thinkNs: 0, criticalSectionNs: 0, seed };
}

function phase(latency: { readonly p50: number; readonly mean: number }, roundTrips: number, rttUs: number): PhaseFloor {
  const floorUs = roundTrips * rttUs;
  const ratio = (us: number) => (floorUs > 0 ? Math.round((us / floorUs) * 100) / 100 : 0);
  return { p50Us: latency.p50, meanUs: latency.mean, roundTrips, floorUs, ratioP50: ratio(latency.p50), ratioMean: ratio(latency.mean) };
}

/** The floor report of one probe run. */
export function floorReport(family: 'rdma' | 'switch', summary: RunSummary, probe: Pick<BenchReport, 'verbsPerAcquire' | 'verbsPerRelease'>, transport: TransportFloor): FloorReport {
  const operations = summary.acquires;
  if (family === 'switch') {
    return { transport: 'nats', rttUs: transport.natsRttUs, ...transport, operations, acquire: phase(summary.latencyUs, 1, transport.natsRttUs) };
  }
  return {
    transport: 'grpc',
    rttUs: transport.grpcRttUs,
    ...transport,
    operations,
    acquire: phase(summary.latencyUs, probe.verbsPerAcquire.total, transport.grpcRttUs),
    release: phase(summary.releaseLatencyUs, probe.verbsPerRelease.total, transport.grpcRttUs),
  };
}

/** One line for the table: "uncontended acquire p50 165 µs = 3.75× (1 verb × 44 µs gRPC)". */
export function describeFloor(floor: FloorReport): string {
  const unit = floor.transport === 'grpc' ? 'verb' : 'exchange';
  const part = (name: string, p: PhaseFloor) =>
    `${name} p50 ${p.p50Us.toFixed(1)} µs (mean ${p.meanUs.toFixed(1)}) = ${p.ratioP50}× (mean ${p.ratioMean}×) of ${p.roundTrips.toFixed(2)} ${unit}${p.roundTrips === 1 ? '' : 's'} × ${floor.rttUs.toFixed(1)} µs ${floor.transport === 'grpc' ? 'gRPC' : 'NATS'}`;
  return [`uncontended (${floor.operations} ops, one client): ${part('acquire', floor.acquire)}`, ...(floor.release ? [`  ${part('release', floor.release)}`] : [])].join('\n');
}
