// Measuring the floor on a live cluster: the bare paths from the CLI's process, the memory node's
// verb rate, and the processor time of the services' event loops (transport-floor.ts computes).
import { readFileSync } from 'node:fs';
import { clientCredentials, createSubjects, grpcStreamThroughput, MemoryQueuePair, memoryNodeVerbThroughput, openGrpcRoundTrips, openNatsEchoRoundTrips, openNatsRoundTrips, silentLogger, type RoundTripSession } from '@lockfabric/live';
import { FabricAccessError } from '@lockfabric/ports';
import type { ClusterState, ProcessRecord } from '../cluster/local-cluster.js';
import { ClusterStateError } from '../cluster/errors.js';
import { TRANSPORT_BENCH_CLUSTER } from '../cluster/nats-auth.js';
import { addressOf } from './remote-cluster.js';
import { cpuPerMessage, processorTimePerOperation } from './transport-floor.js';
import type { FloorSamples, MemoryNodeFloor, PhaseCpu } from './transport-floor.js';

/** Bare round trips of each path per floor (over every round), and pipelined messages for the memory node's figures. */
export const FLOOR_ROUND_TRIPS = 1_000;
const STREAM_MESSAGES = 5_000;

/** The bare transports of a cluster, each on one connection kept open (and warmed up) across rounds. */
export interface FloorPaths {
  /** `roundTrips` round trips of each path, the divisor of `family` last, right before the probe. */
  round(roundTrips: number): Promise<FloorSamples>;
  /** Echo requests sent to the switch so far, warm-up included (undefined without a switch). */
  switchEchoes(): number | undefined;
  close(): Promise<void>;
}

/**
 * Opens the floor's paths from the CLI's process: the gRPC stream to the first memory node (the
 * same port, TLS and process the compute nodes' queue pairs reach), a NATS exchange with both ends
 * here, and a NATS request through the cluster's server to the switch's echo subject.
 */
export async function openFloorPaths(state: ClusterState, family: 'rdma' | 'switch'): Promise<FloorPaths> {
  const sessions: RoundTripSession[] = [];
  const close = async () => void (await Promise.all(sessions.map((s) => s.close())));
  try {
    const grpc = await openGrpcRoundTrips(memoryNodeAddress(state), { credentials: clientCredentials() });
    sessions.push(grpc);
    const nats = state.natsUrl ? await openNatsRoundTrips({ servers: state.natsUrl, subjects: createSubjects(TRANSPORT_BENCH_CLUSTER) }) : undefined;
    if (nats) sessions.push(nats);
    const hasSwitch = state.processes.some((p) => p.role === 'switch');
    const echo = state.natsUrl && hasSwitch ? await openNatsEchoRoundTrips(state.natsUrl, createSubjects(state.cluster).switchEcho(0)) : undefined;
    if (echo) sessions.push(echo);
    const paths: [keyof FloorSamples, RoundTripSession | undefined][] = [['grpcUs', grpc], ['natsUs', nats], ...(echo ? [['switchEchoUs', echo] as [keyof FloorSamples, RoundTripSession]] : [])];
    // the divisor last, right before the probe
    const divisor: keyof FloorSamples = family === 'rdma' ? 'grpcUs' : echo ? 'switchEchoUs' : 'natsUs';
    const order = [...paths.filter(([key]) => key !== divisor), ...paths.filter(([key]) => key === divisor)];
    return {
      round: async (n) => {
        const samples: Partial<Record<keyof FloorSamples, number[]>> = {};
        for (const [key, session] of order) samples[key] = session ? await session.sample(n) : [];
        return samples as FloorSamples;
      },
      switchEchoes: () => echo?.exchanges(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The memory node's one-verb doorbells per second against the bare pipelined stream to it. */
export async function measureMemoryNode(state: ClusterState): Promise<MemoryNodeFloor> {
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
  return {
    streamMsgsPerSec,
    verbsPerSec,
    ratio: Math.round((verbsPerSec / streamMsgsPerSec) * 100) / 100,
    ...cpuPerMessage({ start: echoCpu, end: echoCpuEnd }, { start: verbCpu, end: verbCpuEnd }, STREAM_MESSAGES),
  };
}

/** The name of the memory node the floor measures (the first): its key in a report's `nicIops`. */
export function floorMemoryNodeName(state: ClusterState): string {
  return memoryNode(state).name;
}

function processorTimeOf(state: ClusterState): PhaseCpu | undefined {
  const nodes = processorTimesUs(state);
  if (!nodes) return undefined;
  const own = process.cpuUsage();
  return { memory: nodes.memory, driver: own.user + own.system };
}

function memoryNode(state: ClusterState): ProcessRecord {
  const memory = state.processes.find((p) => p.role === 'memory');
  if (!memory) throw new ClusterStateError('the live cluster has no memory node to measure the floor against');
  return memory;
}

function memoryNodeAddress(state: ClusterState): string {
  const memory = memoryNode(state);
  return addressOf(memory, memory.grpc);
}

/** The initiator id the CLI's own queue pairs use (no compute node has it). */
const DRIVER_INITIATOR = 65_000;

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

/** The idle interval before a probe whose processor time is the background subtracted from it. */
const IDLE_SAMPLE_MS = 500;

/** Processor time of the probe rounds alone: the floor's rounds between them are left out. */
export interface ProcessorTimeMeter {
  /** Runs one probe round, adding its processor and wall time to the meter's. */
  around<T>(probe: () => Promise<T>): Promise<T>;
  /** Per operation over every round so far (undefined when /proc cannot tell, or for no operations). */
  perOperation(operations: number): { compute: number; memory: number } | undefined;
}

/** Samples the event loops' background over an idle interval, then meters probe rounds against it. */
export async function processorTimeMeter(state: ClusterState): Promise<ProcessorTimeMeter> {
  const idleStart = processorTimesUs(state);
  const idleWallStart = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
  const idleEnd = processorTimesUs(state);
  const idleWallUs = (performance.now() - idleWallStart) * 1_000;
  const spent = { compute: 0, memory: 0 };
  let wallUs = 0;
  let readable = idleStart !== undefined && idleEnd !== undefined;
  return {
    around: async (probe) => {
      const start = processorTimesUs(state);
      const wallStart = performance.now();
      const result = await probe();
      wallUs += (performance.now() - wallStart) * 1_000;
      const end = processorTimesUs(state);
      if (!start || !end) readable = false;
      else for (const role of ['compute', 'memory'] as const) spent[role] += end[role] - start[role];
      return result;
    },
    perOperation: (operations) =>
      readable && operations > 0 ? processorTimePerOperation({ startUs: idleStart!, endUs: idleEnd!, wallUs: idleWallUs }, { startUs: { compute: 0, memory: 0 }, endUs: { ...spent }, wallUs }, operations) : undefined,
  };
}
