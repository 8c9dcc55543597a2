import { roundTripStats } from '@lockfabric/live';
import { RunStats, VerbAccounting, summarize, verbsPerOp } from '@lockfabric/workloads';
import type { RunSummary, WorkloadSpec } from '@lockfabric/workloads';
import type { BenchReport } from '../report/bench-report.js';
import { roundRatios, type LatencyPair, type RoundPhase, type RoundSpread } from './floor-rounds.js';

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

/** One round's bare round trips (µs) of each path; NATS ones are empty without a NATS server. */
export interface FloorSamples {
  readonly grpcUs: readonly number[];
  readonly natsUs: readonly number[];
  /** Through the rack-0 switch's echo subject; absent without a switch. */
  readonly switchEchoUs?: readonly number[];
}

/** Every round's round trips pooled into one median and mean per path (the figures reported before rounds). */
export function pooledTransport(floors: readonly FloorSamples[], switchEchoes: number | undefined): TransportFloor {
  const pool = (pick: (f: FloorSamples) => readonly number[] | undefined) => roundTripStats(floors.flatMap((f) => pick(f) ?? []), 0);
  const grpc = pool((f) => f.grpcUs);
  const nats = pool((f) => f.natsUs);
  const echo = switchEchoes === undefined ? undefined : pool((f) => f.switchEchoUs);
  return {
    grpcRttUs: grpc.p50Us,
    grpcRttMeanUs: grpc.meanUs,
    natsRttUs: nats.p50Us,
    natsRttMeanUs: nats.meanUs,
    ...(echo ? { switchEcho: { rttUs: echo.p50Us, rttMeanUs: echo.meanUs, exchanges: switchEchoes! } } : {}),
  };
}

/** The run's verbs per second on `node` against the bare stream to it; nothing when the node served no verbs. */
export function nicAgainstStream(node: string, nicIops: Readonly<Record<string, number>> | undefined, streamMsgsPerSec: number): NicAgainstStream | undefined {
  const iops = nicIops?.[node];
  if (iops === undefined || iops <= 0 || streamMsgsPerSec <= 0) return undefined;
  return { node, nicIops: iops, streamMsgsPerSec, ratio: Math.round((iops / streamMsgsPerSec) * 100) / 100 };
}

/** Processor time (µs) so far of the memory nodes' main threads and of this process. */
export interface PhaseCpu {
  readonly memory: number;
  readonly driver: number;
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
  /**
   * Each round's p50 over round trips × that round's floor median (and mean over mean): the median
   * over rounds is the figure to judge, since the floor moves between rounds on a shared machine.
   */
  readonly roundRatioP50?: RoundSpread;
  readonly roundRatioMean?: RoundSpread;
}

/** How the floor and the probe alternated, and how far the divisor's round trip moved between rounds. */
export interface FloorRounds {
  readonly count: number;
  /** Probe acquires and bare round trips (of each path) per round. */
  readonly operations: readonly number[];
  readonly floorRoundTrips: readonly number[];
  /** The divisor's round trip in each round (µs, to 0.1): median and mean. */
  readonly rttUs: readonly number[];
  readonly rttMeanUs: readonly number[];
}

/**
 * A many-client run's memory-node verb rate against the raw pipelined stream to the same node,
 * both in this bench run (issue 20: the node should serve as many verbs as the stream carries).
 */
export interface NicAgainstStream {
  /** The memory node (process name, its key in the report's `nicIops`). */
  readonly node: string;
  /** Verbs per second it served over the run. */
  readonly nicIops: number;
  /** Echo messages per second on one pipelined stream to it (`memoryNode.streamMsgsPerSec`). */
  readonly streamMsgsPerSec: number;
  /** nicIops / streamMsgsPerSec. */
  readonly ratio: number;
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
  /** The probe and the floor in alternating rounds (absent on reports from before rounds). */
  readonly rounds?: FloorRounds;
  /** Runs of more than one client: the run's verb rate on the memory node against the bare stream. */
  readonly nicVsStream?: NicAgainstStream;
  /**
   * Processor time the probe cost per operation on the compute and the memory nodes' event-loop
   * threads over its rounds (each round's run start-up included, the floor between them not),
   * background subtracted (local clusters on Linux only: read from /proc). Processor
   * time, unlike latency, does not grow while a process waits for a core, so it compares runs
   * taken under different load.
   */
  readonly cpuUsPerOperation?: { readonly compute: number; readonly memory: number };
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

/** The probe's workload: one client, sequential operations on 1 000 uniform locks, no think time or critical section. */
export function floorProbeSpec(operations: number, seed: number): WorkloadSpec {
  return { clients: 1, locks: 1_000, readRatio: 0, distribution: 'uniform', operations, thinkNs: 0, criticalSectionNs: 0, seed };
}

function phase(latency: LatencyPair, roundTrips: number, rtt: LatencyPair, rounds?: readonly RoundPhase[]): PhaseFloor {
  const floorUs = roundTrips * rtt.p50;
  const floorMeanUs = roundTrips * rtt.mean;
  const ratio = (us: number, floor: number) => (floor > 0 ? Math.round((us / floor) * 100) / 100 : 0);
  // like for like: a median over the floor's median, a mean over the floor's mean
  const pooled = { p50Us: latency.p50, meanUs: latency.mean, roundTrips, floorUs, floorMeanUs, ratioP50: ratio(latency.p50, floorUs), ratioMean: ratio(latency.mean, floorMeanUs) };
  return rounds ? { ...pooled, ...roundRatios(rounds, roundTrips) } : pooled;
}

/** One round of the floor: its probe's latencies and each path's round trip, measured just before. */
export interface FloorRound {
  /** Acquires of the round's probe (a round with none has no ratio). */
  readonly operations: number;
  /** Round trips of each path measured in the round. */
  readonly floorRoundTrips: number;
  readonly acquire: LatencyPair;
  readonly release: LatencyPair;
  readonly grpc: LatencyPair;
  readonly nats: LatencyPair;
  readonly switchEcho?: LatencyPair;
}

/** The floor report of a probe: pooled over its rounds, and with `rounds` each round's ratios too. */
export function floorReport(family: 'rdma' | 'switch', summary: RunSummary, probe: Pick<BenchReport, 'verbsPerAcquire' | 'verbsPerRelease'>, transport: TransportFloor & { readonly memoryNode?: MemoryNodeFloor }, rounds?: readonly FloorRound[]): FloorReport {
  const operations = summary.acquires;
  const { grpcRttUs, grpcRttMeanUs, natsRttUs, natsRttMeanUs, switchEcho, memoryNode } = transport;
  // the switch's echo is the path a switch lock's packets take; the in-CLI exchange only stands in without a switch
  const path = family === 'rdma' ? 'grpc' : switchEcho ? 'switchEcho' : 'nats';
  const rttOf = (r: FloorRound): LatencyPair => r[path] ?? { p50: 0, mean: 0 };
  const measured = rounds?.filter((r) => r.operations > 0);
  const per = (latency: (r: FloorRound) => LatencyPair) => measured?.map((r) => ({ latency: latency(r), rtt: rttOf(r) }));
  const tenths = (x: number) => Math.round(x * 10) / 10;
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
    ...(rounds
      ? { rounds: { count: rounds.length, operations: rounds.map((r) => r.operations), floorRoundTrips: rounds.map((r) => r.floorRoundTrips), rttUs: rounds.map((r) => tenths(rttOf(r).p50)), rttMeanUs: rounds.map((r) => tenths(rttOf(r).mean)) } }
      : {}),
  };
  if (family === 'switch') {
    const rtt = switchEcho ? { p50: switchEcho.rttUs, mean: switchEcho.rttMeanUs } : { p50: natsRttUs, mean: natsRttMeanUs };
    const floorPath = switchEcho ? 'nats-switch-echo' : 'nats-in-cli';
    return { transport: 'nats', floorPath, rttUs: rtt.p50, rttMeanUs: rtt.mean, ...common, acquire: phase(summary.latencyUs, 1, rtt, per((r) => r.acquire)) };
  }
  const grpc = { p50: grpcRttUs, mean: grpcRttMeanUs };
  const acquire = summary.latencyUs;
  const release = summary.releaseLatencyUs;
  const both = (a: LatencyPair, b: LatencyPair) => ({ p50: a.p50 + b.p50, mean: a.mean + b.mean });
  return {
    transport: 'grpc',
    floorPath: 'grpc-memory-node',
    rttUs: grpcRttUs,
    rttMeanUs: grpcRttMeanUs,
    ...common,
    acquire: phase(acquire, probe.verbsPerAcquire.total, grpc, per((r) => r.acquire)),
    release: phase(release, probe.verbsPerRelease.total, grpc, per((r) => r.release)),
    operation: phase(both(acquire, release), probe.verbsPerAcquire.total + probe.verbsPerRelease.total, grpc, per((r) => both(r.acquire, r.release))),
  };
}

/** One probe round as measured: its clients' latencies (from its history), verbs and length. */
export interface ProbeRound {
  readonly stats: RunStats;
  readonly accounting: VerbAccounting;
  readonly elapsedNs: number;
}

/**
 * The floor report of interleaved rounds: the probe's and each path's figures pooled over every
 * round (as one block gave them), and each round's own ratios beside them.
 */
export function floorFromRounds(
  family: 'rdma' | 'switch',
  floors: readonly FloorSamples[],
  probes: readonly ProbeRound[],
  measured: { readonly switchEchoes: number | undefined; readonly memoryNode?: MemoryNodeFloor },
): FloorReport {
  const summary = summarize(RunStats.mergeAll(probes.map((p) => p.stats)), probes.reduce((sum, p) => sum + p.elapsedNs, 0));
  const accounting = new VerbAccounting();
  for (const p of probes) accounting.merge(p.accounting.counts);
  const verbs = { verbsPerAcquire: verbsPerOp(accounting.counts.acquire, summary.acquires), verbsPerRelease: verbsPerOp(accounting.counts.release, summary.releases) };
  const pair = (samples: readonly number[]) => {
    const s = roundTripStats(samples, 0);
    return { p50: s.p50Us, mean: s.meanUs };
  };
  const rounds = probes.map((p, k): FloorRound => {
    const floor = floors[k]!;
    const own = summarize(p.stats, p.elapsedNs);
    return {
      operations: own.acquires,
      floorRoundTrips: floor.grpcUs.length,
      acquire: own.latencyUs,
      release: own.releaseLatencyUs,
      grpc: pair(floor.grpcUs),
      nats: pair(floor.natsUs),
      ...(floor.switchEchoUs ? { switchEcho: pair(floor.switchEchoUs) } : {}),
    };
  });
  const transport = { ...pooledTransport(floors, measured.switchEchoes), ...(measured.memoryNode ? { memoryNode: measured.memoryNode } : {}) };
  return floorReport(family, summary, verbs, transport, rounds);
}
