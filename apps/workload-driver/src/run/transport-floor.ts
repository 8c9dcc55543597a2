import { clientCredentials, createSubjects, grpcRoundTripStats, grpcStreamThroughput, MemoryQueuePair, memoryNodeVerbThroughput, natsEchoRoundTripStats, natsRoundTripStats, silentLogger, type RoundTripStats } from '@lockfabric/live';
import { readFileSync } from 'node:fs';
import type { RunSummary } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import type { ClusterState } from '../cluster/local-cluster.js';
import { TRANSPORT_BENCH_CLUSTER } from '../cluster/nats-auth.js';
import type { BenchReport } from '../report/bench-report.js';
import { addressOf } from './remote-cluster.js';
import { FabricAccessError } from '@lockfabric/ports';
import { ClusterStateError } from '../cluster/errors.js';

/** The raw round trips a live bench divides by, measured in the same run (median and mean, µs). */
export interface TransportFloor {
  /** Bare gRPC stream round trip to the cluster's memory node (its echo method), over the cluster's TLS setting. */
  readonly grpcRttUs: number;
  readonly grpcRttMeanUs: number;
  /**
   * NATS request/reply with both ends in the CLI's process, through the cluster's nats-server: two
   * processes on the path, kept beside the switch echo for comparison.
   */
  readonly natsRttUs: number;
  readonly natsRttMeanUs: number;
  /**
   * NATS request/reply from the CLI through nats-server to the rack-0 switch's echo subject and
   * back: the path a switch lock's request and grant take. Absent without a switch.
   */
  readonly switchEcho?: SwitchEchoFloor;
}

export interface SwitchEchoFloor {
  readonly rttUs: number;
  readonly rttMeanUs: number;
  /** Echo requests sent (warm-up included): the switch's lockfabric_switch_echoes_total moves by this. */
  readonly exchanges: number;
}

/** The memory node serving one-verb doorbells against the bare stream to the same process (DESIGN §9). */
export interface MemoryNodeFloor {
  /** Echo messages per second on one pipelined stream to the memory node (64 in flight). */
  readonly streamMsgsPerSec: number;
  /** One-verb doorbells (READ 8 bytes) per second on one queue pair to it (64 in flight). */
  readonly verbsPerSec: number;
  /** verbsPerSec / streamMsgsPerSec: 1 means serving a verb costs the node no more than echoing a message. */
  readonly ratio: number;
  /**
   * Processor time per message of each phase (µs; local clusters on Linux): the memory nodes' event
   * loops and this CLI process, the other end of both phases. Which side's time grows from echo to
   * verb says whether a ratio below 1 is the memory node's cost or the measuring client's.
   */
  readonly cpuUsPerMessage?: { readonly memory: { readonly echo: number; readonly verb: number }; readonly driver: { readonly echo: number; readonly verb: number } };
}

/** Round trips measured from the same round trip count in every run; the median is the figure. */
const RTT_MESSAGES = 1_000;
const STREAM_MESSAGES = 5_000;

/**
 * The bare round trips on this cluster, from the CLI's process: the gRPC stream to the first
 * memory node (the same port, TLS and process the compute nodes' queue pairs reach) and a NATS
 * exchange through the cluster's server. Half of the messages go before the probe and half after
 * (`measureClusterFloor(state, before)`): the mean of the two medians follows a load that changed
 * while the probe ran.
 */
export async function measureRoundTrips(state: ClusterState): Promise<TransportFloor> {
  const address = memoryNodeAddress(state);
  const grpc = await grpcRoundTripStats(address, { messages: RTT_MESSAGES / 2, credentials: clientCredentials() });
  const none: RoundTripStats = { p50Us: 0, meanUs: 0, exchanges: 0 };
  const nats = state.natsUrl ? await natsRoundTripStats({ servers: state.natsUrl, subjects: createSubjects(TRANSPORT_BENCH_CLUSTER), messages: RTT_MESSAGES / 2 }) : none;
  const hasSwitch = state.processes.some((p) => p.role === 'switch');
  const echo = state.natsUrl && hasSwitch ? await natsEchoRoundTripStats(state.natsUrl, createSubjects(state.cluster).switchEcho(0), { messages: RTT_MESSAGES / 2 }) : undefined;
  return {
    grpcRttUs: grpc.p50Us,
    grpcRttMeanUs: grpc.meanUs,
    natsRttUs: nats.p50Us,
    natsRttMeanUs: nats.meanUs,
    ...(echo ? { switchEcho: { rttUs: echo.p50Us, rttMeanUs: echo.meanUs, exchanges: echo.exchanges } } : {}),
  };
}

/** The floor after a probe: round trips (averaged with `before`), then the memory node's verbs/s against the bare stream to it. */
export async function measureClusterFloor(state: ClusterState, before?: TransportFloor): Promise<TransportFloor & { readonly memoryNode: MemoryNodeFloor }> {
  const after = await measureRoundTrips(state);
  const mean = (a: number, b: number | undefined) => (b === undefined ? a : (a + b) / 2);
  const address = memoryNodeAddress(state);
  const echoCpu = processorTimeOf(state);
  const streamMsgsPerSec = await grpcStreamThroughput(address, { messages: STREAM_MESSAGES, credentials: clientCredentials() });
  const echoCpuEnd = processorTimeOf(state);
  const memory = state.processes.find((p) => p.role === 'memory')!;
  const qp = await MemoryQueuePair.connect(address, DRIVER_INITIATOR, { logger: silentLogger });
  let verbsPerSec: number;
  let verbCpu: PhaseCpu | undefined;
  let verbCpuEnd: PhaseCpu | undefined;
  try {
    const region = (await qp.describe()).regions.find((r) => r.region === 0);
    if (!region) throw new FabricAccessError('unknown-region', `memory node at ${address} has no lock table (region 0)`);
    verbCpu = processorTimeOf(state);
    verbsPerSec = await memoryNodeVerbThroughput(qp, { op: 'read', addr: { node: memory.node, region: 0, rkey: region.rkey, offset: 0 }, length: 8 }, { messages: STREAM_MESSAGES });
    verbCpuEnd = processorTimeOf(state);
  } finally {
    qp.close();
  }
  const echo = after.switchEcho;
  const echoBefore = before?.switchEcho;
  return {
    grpcRttUs: mean(after.grpcRttUs, before?.grpcRttUs),
    grpcRttMeanUs: mean(after.grpcRttMeanUs, before?.grpcRttMeanUs),
    natsRttUs: mean(after.natsRttUs, before?.natsRttUs),
    natsRttMeanUs: mean(after.natsRttMeanUs, before?.natsRttMeanUs),
    ...(echo ? { switchEcho: { rttUs: mean(echo.rttUs, echoBefore?.rttUs), rttMeanUs: mean(echo.rttMeanUs, echoBefore?.rttMeanUs), exchanges: echo.exchanges + (echoBefore?.exchanges ?? 0) } } : {}),
    memoryNode: {
      streamMsgsPerSec,
      verbsPerSec,
      ratio: Math.round((verbsPerSec / streamMsgsPerSec) * 100) / 100,
      ...cpuPerMessage({ start: echoCpu, end: echoCpuEnd }, { start: verbCpu, end: verbCpuEnd }, STREAM_MESSAGES),
    },
  };
}

/** Processor time (µs) so far of the memory nodes' main threads and of this process. */
interface PhaseCpu {
  readonly memory: number;
  readonly driver: number;
}

function processorTimeOf(state: ClusterState): PhaseCpu | undefined {
  const nodes = processorTimesUs(state);
  if (!nodes) return undefined;
  const own = process.cpuUsage();
  return { memory: nodes.memory, driver: own.user + own.system };
}

/** Each side's processor time per message of the echo and the verb phase; nothing when a snapshot is missing. */
export function cpuPerMessage(
  echo: { readonly start: PhaseCpu | undefined; readonly end: PhaseCpu | undefined },
  verb: { readonly start: PhaseCpu | undefined; readonly end: PhaseCpu | undefined },
  messages: number,
): Pick<MemoryNodeFloor, 'cpuUsPerMessage'> {
  if (!echo.start || !echo.end || !verb.start || !verb.end || messages <= 0) return {};
  const per = (from: PhaseCpu, to: PhaseCpu, side: keyof PhaseCpu) => Math.round(((to[side] - from[side]) / messages) * 10) / 10;
  return {
    cpuUsPerMessage: {
      memory: { echo: per(echo.start, echo.end, 'memory'), verb: per(verb.start, verb.end, 'memory') },
      driver: { echo: per(echo.start, echo.end, 'driver'), verb: per(verb.start, verb.end, 'driver') },
    },
  };
}

function memoryNodeAddress(state: ClusterState): string {
  const memory = state.processes.find((p) => p.role === 'memory');
  if (!memory) throw new ClusterStateError('the live cluster has no memory node to measure the floor against');
  return addressOf(memory, memory.grpc);
}

/** The initiator id the CLI's own queue pairs use (no compute node has it). */
const DRIVER_INITIATOR = 65_000;

/** One phase (acquire or release) of the uncontended probe against its floor. */
export interface PhaseFloor {
  readonly p50Us: number;
  readonly meanUs: number;
  /** Round trips the phase needs on the wire: verbs (RDMA family) or packet exchanges (switch family). */
  readonly roundTrips: number;
  /** roundTrips × the transport's bare round trip (median): what p50 is divided by. */
  readonly floorUs: number;
  /** roundTrips × the transport's mean round trip: what the mean is divided by. */
  readonly floorMeanUs: number;
  /** p50Us / floorUs. */
  readonly ratioP50: number;
  /** meanUs / floorMeanUs. */
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
  /**
   * The round trip divided by: `grpc-memory-node` (gRPC stream echo of the memory node),
   * `nats-switch-echo` (NATS through the switch process), or `nats-in-cli` (both NATS ends in the
   * CLI, used only when the cluster has no switch).
   */
  readonly floorPath: 'grpc-memory-node' | 'nats-switch-echo' | 'nats-in-cli';
  /** That round trip's median and mean (µs). */
  readonly rttUs: number;
  readonly rttMeanUs: number;
  readonly grpcRttUs: number;
  readonly grpcRttMeanUs: number;
  /** NATS with both ends in the CLI's process (two processes on the path). */
  readonly natsRttUs: number;
  readonly natsRttMeanUs: number;
  readonly switchEcho?: SwitchEchoFloor;
  readonly operations: number;
  readonly acquire: PhaseFloor;
  readonly release?: PhaseFloor;
  /**
   * Acquire and release together (RDMA family): p50 is the sum of the two phases' p50s, mean the
   * sum of their means; round trips are the verbs of both. The issue's target is on this one.
   */
  readonly operation?: PhaseFloor;
  /** The probe's verbs per acquire and per release by opcode: exact counts of the fast path. */
  readonly verbsPerAcquire: BenchReport['verbsPerAcquire'];
  readonly verbsPerRelease: BenchReport['verbsPerRelease'];
  readonly memoryNode?: MemoryNodeFloor;
  /**
   * Processor time the probe cost per operation on the compute and the memory nodes' event-loop
   * threads, background subtracted (local clusters on Linux only: read from /proc). Processor
   * time, unlike latency, does not grow while a process waits for a core, so it compares runs
   * taken under different load.
   */
  readonly cpuUsPerOperation?: { readonly compute: number; readonly memory: number };
}

/**
 * Processor time (µs) of each local compute and memory node's main thread — the event loop that
 * runs the verb path — from /proc/<pid>/schedstat (ns); undefined off Linux or for remote nodes.
 */
export function processorTimesUs(state: ClusterState): { compute: number; memory: number } | undefined {
  let compute = 0;
  let memory = 0;
  for (const p of state.processes) {
    if (p.role !== 'compute' && p.role !== 'memory') continue;
    let ns: number;
    try {
      ns = Number(readFileSync(`/proc/${p.pid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      return undefined; // not Linux, or not a local process
    }
    if (!Number.isFinite(ns)) return undefined;
    if (p.role === 'compute') compute += ns / 1_000;
    else memory += ns / 1_000;
  }
  return { compute, memory };
}

/**
 * Processor time per operation of a probe: the main threads' time over the probe, less what the
 * same threads spent in an idle interval just before it (heartbeats, metrics), scaled to the
 * probe's length. Never negative.
 */
export function processorTimePerOperation(
  idle: { readonly startUs: { compute: number; memory: number }; readonly endUs: { compute: number; memory: number }; readonly wallUs: number },
  probe: { readonly startUs: { compute: number; memory: number }; readonly endUs: { compute: number; memory: number }; readonly wallUs: number },
  operations: number,
): { compute: number; memory: number } {
  const per = (role: 'compute' | 'memory') => {
    const background = ((idle.endUs[role] - idle.startUs[role]) / Math.max(1, idle.wallUs)) * probe.wallUs;
    return Math.max(0, Math.round((probe.endUs[role] - probe.startUs[role] - background) / Math.max(1, operations)));
  };
  return { compute: per('compute'), memory: per('memory') };
}

/** The idle interval before a probe whose processor time is the background subtracted from it. */
const IDLE_SAMPLE_MS = 500;

/**
 * Runs `probe` after sampling the event loops' background over an idle interval, and gives its
 * processor time per operation (undefined when /proc cannot tell, or for no operations).
 */
export async function withProcessorTime<T>(state: ClusterState, probe: () => Promise<T>): Promise<{ result: T; perOperation(operations: number): { compute: number; memory: number } | undefined }> {
  const idleStart = processorTimesUs(state);
  const idleWallStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
  const idleEnd = processorTimesUs(state);
  const idleWallUs = (performance.now() - idleWallStart) * 1_000;
  const probeStart = processorTimesUs(state);
  const probeWallStart = performance.now();
  const result = await probe();
  const probeWallUs = (performance.now() - probeWallStart) * 1_000;
  const probeEnd = processorTimesUs(state);
  return {
    result,
    perOperation: (operations) =>
      idleStart && idleEnd && probeStart && probeEnd && operations > 0
        ? processorTimePerOperation({ startUs: idleStart, endUs: idleEnd, wallUs: idleWallUs }, { startUs: probeStart, endUs: probeEnd, wallUs: probeWallUs }, operations)
        : undefined,
  };
}

/** The probe's workload: one client, sequential operations on 1 000 uniform locks, no think time or critical section. */
export function floorProbeSpec(operations: number, seed: number): WorkloadSpec {
  return { clients: 1, locks: 1_000, readRatio: 0, distribution: 'uniform', operations, thinkNs: 0, criticalSectionNs: 0, seed };
}

function phase(latency: { readonly p50: number; readonly mean: number }, roundTrips: number, rtt: { readonly p50: number; readonly mean: number }): PhaseFloor {
  const floorUs = roundTrips * rtt.p50;
  const floorMeanUs = roundTrips * rtt.mean;
  const ratio = (us: number, floor: number) => (floor > 0 ? Math.round((us / floor) * 100) / 100 : 0);
  // like for like: a median over the floor's median, a mean over the floor's mean
  return { p50Us: latency.p50, meanUs: latency.mean, roundTrips, floorUs, floorMeanUs, ratioP50: ratio(latency.p50, floorUs), ratioMean: ratio(latency.mean, floorMeanUs) };
}

/** The floor report of one probe run. */
export function floorReport(family: 'rdma' | 'switch', summary: RunSummary, probe: Pick<BenchReport, 'verbsPerAcquire' | 'verbsPerRelease'>, transport: TransportFloor & { readonly memoryNode?: MemoryNodeFloor }): FloorReport {
  const operations = summary.acquires;
  const { grpcRttUs, grpcRttMeanUs, natsRttUs, natsRttMeanUs, switchEcho, memoryNode } = transport;
  const common = {
    grpcRttUs,
    grpcRttMeanUs,
    natsRttUs,
    natsRttMeanUs,
    ...(switchEcho ? { switchEcho } : {}),
    operations,
    verbsPerAcquire: probe.verbsPerAcquire,
    verbsPerRelease: probe.verbsPerRelease,
    ...(memoryNode ? { memoryNode } : {}),
  };
  if (family === 'switch') {
    // the switch's echo is the path a switch lock's packets take; the in-CLI exchange only stands in without a switch
    const rtt = switchEcho ? { p50: switchEcho.rttUs, mean: switchEcho.rttMeanUs } : { p50: natsRttUs, mean: natsRttMeanUs };
    const floorPath = switchEcho ? 'nats-switch-echo' : 'nats-in-cli';
    return { transport: 'nats', floorPath, rttUs: rtt.p50, rttMeanUs: rtt.mean, ...common, acquire: phase(summary.latencyUs, 1, rtt) };
  }
  const grpc = { p50: grpcRttUs, mean: grpcRttMeanUs };
  const acquire = summary.latencyUs;
  const release = summary.releaseLatencyUs;
  return {
    transport: 'grpc',
    floorPath: 'grpc-memory-node',
    rttUs: grpcRttUs,
    rttMeanUs: grpcRttMeanUs,
    ...common,
    acquire: phase(acquire, probe.verbsPerAcquire.total, grpc),
    release: phase(release, probe.verbsPerRelease.total, grpc),
    operation: phase({ p50: acquire.p50 + release.p50, mean: acquire.mean + release.mean }, probe.verbsPerAcquire.total + probe.verbsPerRelease.total, grpc),
  };
}
