import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePrometheusText, sumSamples } from '@lockfabric/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { runCli } from './cli.js';

// A live bench sets each protocol's uncontended latency against the bare transport
// measured in the same run. The figures are recorded (printed and written under test-output/),
// never asserted on: only their shape and the exact verbs each fast path needs are.

interface PhaseJson {
  readonly p50Us: number;
  readonly meanUs: number;
  readonly roundTrips: number;
  readonly floorUs: number;
  readonly floorMeanUs: number;
  readonly ratioP50: number;
  readonly ratioMean: number;
  readonly roundRatioP50: Spread;
  readonly roundRatioMean: Spread;
}
interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}
type Verbs = Record<'read' | 'write' | 'cas' | 'faa' | 'maskedCas' | 'maskedFaa' | 'total', number>;
interface FloorJson {
  readonly transport: 'grpc' | 'nats';
  readonly floorPath: string;
  readonly rttUs: number;
  readonly rttMeanUs: number;
  readonly grpcRttUs: number;
  readonly grpcRttMeanUs: number;
  readonly natsRttUs: number;
  readonly natsRttMeanUs: number;
  readonly switchEcho: { readonly rttUs: number; readonly rttMeanUs: number; readonly exchanges: number };
  readonly operations: number;
  readonly acquire: PhaseJson;
  readonly release?: PhaseJson;
  readonly operation?: PhaseJson;
  readonly verbsPerAcquire: Verbs;
  readonly verbsPerRelease: Verbs;
  readonly memoryNode: { readonly streamMsgsPerSec: number; readonly verbsPerSec: number; readonly ratio: number; readonly cpuUsPerMessage?: { readonly memory: { readonly echo: number; readonly verb: number }; readonly driver: { readonly echo: number; readonly verb: number } } };
  readonly cpuUsPerOperation: { readonly compute: number; readonly memory: number };
  readonly rounds: { readonly count: number; readonly operations: number[]; readonly floorRoundTrips: number[]; readonly rttUs: number[]; readonly rttMeanUs: number[] };
  readonly nicVsStream?: { readonly node: string; readonly nicIops: number; readonly streamMsgsPerSec: number; readonly ratio: number };
}

/** Each round's ratios: a median between the extremes (their values are recorded, not asserted). */
function expectSpread(spread: Spread | undefined, what: string): void {
  expect(spread, what).toBeDefined();
  expect(spread!.min, what).toBeGreaterThan(0);
  expect(spread!.median, what).toBeGreaterThanOrEqual(spread!.min);
  expect(spread!.max, what).toBeGreaterThanOrEqual(spread!.median);
}

/**
 * Rounds of the floor test: each round is a run of its own, and a run's start-up verbs (DecLock's
 * clock sync, §5.3) land in its first acquire, so rounds of 50 operations keep them under
 * SLOW_PATH_SHARE. The bare round trips of each path over all rounds: FLOOR_ROUND_TRIPS (floor-paths.ts).
 */
const ROUNDS = 3;
const FLOOR_OPS = 150;
const FLOOR_ROUND_TRIPS = 1_000;
/** Untimed round trips each floor connection makes once, when opened. */
const WARMUP_ROUND_TRIPS = 200;

const none: Verbs = { read: 0, write: 0, cas: 0, faa: 0, maskedCas: 0, maskedFaa: 0, total: 0 };
const verbs = (counts: Partial<Verbs>): Verbs => ({ ...none, ...counts, total: Object.values(counts).reduce((a, b) => a + b, 0) });
/** Exact verbs of one uncontended acquire and release (each protocol's README and paper). */
const FAST_PATH: Record<string, { acquire: Verbs; release: Verbs }> = {
  caslock: { acquire: verbs({ cas: 1 }), release: verbs({ write: 1 }) },
  dslr: { acquire: verbs({ faa: 1 }), release: verbs({ cas: 1 }) },
  shiftlock: { acquire: verbs({ maskedCas: 1 }), release: verbs({ maskedCas: 1 }) },
  declock: { acquire: verbs({ faa: 1 }), release: verbs({ read: 1, faa: 1 }) },
  fisslock: { acquire: none, release: none },
};

/**
 * Each opcode's count per operation is the fast path's, give or take the few operations a stalled
 * process pushes off it on a loaded machine (a ShiftLock hold past its lease READs RelCnt on release,
 * spec §3.4; a DecLock acquire that timed out resets): at most SLOW_PATH_SHARE more of any opcode.
 * One verb more or less on the fast path itself fails.
 */
const SLOW_PATH_SHARE = 0.05;
function expectFastPath(protocol: string, phase: string, actual: Verbs, expected: Verbs): void {
  for (const op of Object.keys(expected) as (keyof Verbs)[]) {
    if (op === 'total') continue;
    expect(actual[op], `${protocol} ${phase} ${op}`).toBeGreaterThanOrEqual(expected[op]);
    expect(actual[op], `${protocol} ${phase} ${op}`).toBeLessThanOrEqual(expected[op] + SLOW_PATH_SHARE);
  }
}

describe('lockfabric bench --substrate live: the transport floor', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock' });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  /** Echo requests the switch has answered (its /metrics). */
  async function switchEchoes(): Promise<number> {
    const sw = cluster.state.processes.find((p) => p.role === 'switch')!;
    const text = await (await fetch(`http://127.0.0.1:${sw.health}/metrics`)).text();
    return sumSamples(parsePrometheusText(text), 'lockfabric_switch_echoes_total');
  }

  it('RDMA locks over gRPC and fisslock over NATS: exact fast-path verbs and ratios to the floor measured in the run', async () => {
    const protocols = Object.keys(FAST_PATH);
    const echoesBefore = await switchEchoes();
    const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--protocol', protocols.join(','), '--clients', '2', '--operations', '50', '--floor-ops', String(FLOOR_OPS), '--floor-rounds', String(ROUNDS), '--warmup-ops', '100', '--json']);
    expect(code, stderr).toBe(0);
    // TLS clients send a host name as SNI, never the IP they dial (Node's DEP0123 warning).
    expect(stderr).not.toMatch(/DEP0123/);
    const serviceLogs = readdirSync(cluster.dir).filter((f) => f.endsWith('.log'));
    expect(serviceLogs.length).toBeGreaterThan(3);
    for (const log of serviceLogs) expect(readFileSync(join(cluster.dir, log), 'utf8'), log).not.toMatch(/DEP0123/);
    const { results } = JSON.parse(stdout) as { results: { protocol: string; floor?: FloorJson }[] };
    const floors = new Map(results.map((r) => [r.protocol, r.floor]));
    // the switch answered exactly the echo requests the floors say they sent: the NATS floor crossed it
    const echoesSent = [...floors.values()].reduce((sum, f) => sum + (f?.switchEcho.exchanges ?? 0), 0);
    expect(echoesSent).toBeGreaterThan(0);
    expect((await switchEchoes()) - echoesBefore).toBe(echoesSent);
    for (const protocol of protocols) {
      const floor = floors.get(protocol);
      const rdma = protocol !== 'fisslock';
      const expected = FAST_PATH[protocol]!;
      expect(floor, protocol).toMatchObject({ transport: rdma ? 'grpc' : 'nats', operations: FLOOR_OPS });
      expectFastPath(protocol, 'acquire', floor!.verbsPerAcquire, expected.acquire);
      expectFastPath(protocol, 'release', floor!.verbsPerRelease, expected.release);
      expect(floor!.rttUs, protocol).toBeGreaterThan(0);
      expect(floor!.acquire.roundTrips, protocol).toBe(rdma ? floor!.verbsPerAcquire.total : 1);
      expect(floor!.acquire.floorUs).toBeCloseTo(floor!.acquire.roundTrips * floor!.rttUs, 6);
      // the mean ratio divides by the mean floor, the p50 ratio by the median one
      expect(floor!.rttMeanUs, protocol).toBeGreaterThan(0);
      expect(floor!.grpcRttMeanUs).toBeGreaterThan(0);
      expect(floor!.natsRttMeanUs).toBeGreaterThan(0);
      expect(floor!.switchEcho.rttMeanUs).toBeGreaterThan(0);
      expect(floor!.acquire.floorMeanUs).toBeCloseTo(floor!.acquire.roundTrips * floor!.rttMeanUs, 6);
      if (floor!.acquire.floorMeanUs > 0) expect(floor!.acquire.ratioMean).toBeCloseTo(floor!.acquire.meanUs / floor!.acquire.floorMeanUs, 1);
      expect(floor!.floorPath, protocol).toBe(rdma ? 'grpc-memory-node' : 'nats-switch-echo');
      expect(floor!.rttUs, protocol).toBe(rdma ? floor!.grpcRttUs : floor!.switchEcho.rttUs);
      expect(floor!.acquire.ratioP50).toBeGreaterThan(0);
      expect(floor!.memoryNode.verbsPerSec).toBeGreaterThan(0);
      expect(floor!.memoryNode.streamMsgsPerSec).toBeGreaterThan(0);
      // a local cluster on Linux: both sides' processor time per message of both phases
      expect(floor!.memoryNode.cpuUsPerMessage?.memory.verb).toBeGreaterThan(0);
      expect(floor!.memoryNode.cpuUsPerMessage?.driver.echo).toBeGreaterThan(0);
      // a local cluster on Linux: processor time per operation is read from /proc
      expect(floor!.cpuUsPerOperation.compute).toBeGreaterThanOrEqual(0);
      expect(floor!.cpuUsPerOperation.memory).toBeGreaterThanOrEqual(0);
      // the floor and the probe alternated: the rounds split both totals, each round has its own ratio
      const rounds = floor!.rounds;
      expect(rounds.count, protocol).toBe(ROUNDS);
      expect(rounds.operations, protocol).toStrictEqual([50, 50, 50]);
      expect(rounds.floorRoundTrips, protocol).toStrictEqual([334, 333, 333]);
      expect(rounds.rttUs.length).toBe(ROUNDS);
      for (const us of [...rounds.rttUs, ...rounds.rttMeanUs]) expect(us, protocol).toBeGreaterThan(0);
      expectSpread(floor!.acquire.roundRatioP50, `${protocol} acquire p50`);
      expectSpread(floor!.acquire.roundRatioMean, `${protocol} acquire mean`);
      // one connection per path for every round: the switch answered its warm-up and every round's echoes
      expect(floor!.switchEcho.exchanges, protocol).toBe(WARMUP_ROUND_TRIPS + FLOOR_ROUND_TRIPS);
      if (rdma) {
        expectSpread(floor!.operation?.roundRatioP50, `${protocol} acquire+release p50`);
        expectSpread(floor!.operation?.roundRatioMean, `${protocol} acquire+release mean`);
        // two clients: the run's verbs per second on the memory node beside the bare stream to it
        const nic = floor!.nicVsStream;
        expect(nic, protocol).toBeDefined();
        expect(nic!.streamMsgsPerSec).toBe(floor!.memoryNode.streamMsgsPerSec);
        expect(nic!.ratio).toBeCloseTo(nic!.nicIops / nic!.streamMsgsPerSec, 1);
        expect(floor!.release?.roundTrips, protocol).toBe(floor!.verbsPerRelease.total);
        expect(floor!.operation, protocol).toMatchObject({ roundTrips: floor!.verbsPerAcquire.total + floor!.verbsPerRelease.total });
        expect(floor!.operation!.ratioMean).toBeGreaterThan(0);
      } else {
        expect(floor!.release).toBeUndefined();
        expect(floor!.operation).toBeUndefined();
      }
    }
    const dir = join(import.meta.dirname, '..', 'test-output');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'live-floor.json'), JSON.stringify(Object.fromEntries(floors), null, 2));
    const line = (f: FloorJson | undefined) => ({ rttUs: f?.rttUs, roundRttUs: f?.rounds.rttUs, acquire: f?.acquire.ratioP50, release: f?.release?.ratioP50, operationP50: f?.operation?.ratioP50, operationMean: f?.operation?.ratioMean, byRound: (f?.operation ?? f?.acquire)?.roundRatioP50, nicVsStream: f?.nicVsStream?.ratio, memoryNode: f?.memoryNode.ratio, memoryNodeCpuUsPerMessage: f?.memoryNode.cpuUsPerMessage, cpuUsPerOperation: f?.cpuUsPerOperation });
    console.log(`live floor figures: ${JSON.stringify(Object.fromEntries([...floors].map(([p, f]) => [p, line(f)])))}`);
  }, 180_000);

  /** Runs the compute nodes have completed (their /metrics). */
  async function computeRuns(): Promise<number> {
    let runs = 0;
    for (const p of cluster.state.processes.filter((q) => q.role === 'compute')) {
      const text = await (await fetch(`http://127.0.0.1:${p.health}/metrics`)).text();
      runs += sumSamples(parsePrometheusText(text), 'lockfabric_runs_total');
    }
    return runs;
  }

  // A fresh service process runs a protocol in unoptimised code at first; the warm-up runs the same
  // workload before the measured run and stays out of its figures.
  it('--warmup-ops N runs N untimed operations first, one run more on the compute nodes, none in the figures', async () => {
    const bench = async (warmUpOps: number) => {
      const before = await computeRuns();
      const { code, stdout, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '-p', 'caslock', '-c', '1', '-n', '40', '--warmup-ops', String(warmUpOps), '--floor-ops', '0', '--json']);
      expect(code, stderr).toBe(0);
      return { report: JSON.parse(stdout) as { acquires: number; verbsPerAcquire: Verbs; warmUp?: { operations: number; acquires: number; violations: number } }, runs: (await computeRuns()) - before };
    };
    const warm = await bench(120);
    expect(warm.report.acquires).toBe(40);
    expect(warm.report.warmUp).toEqual({ operations: 120, acquires: 120, violations: 0 });
    expectFastPath('caslock', 'acquire', warm.report.verbsPerAcquire, FAST_PATH['caslock']!.acquire);
    const cold = await bench(0);
    expect(cold.report.acquires).toBe(40);
    expect(cold.report.warmUp).toBeUndefined();
    // the compute nodes ran the warm-up as a run of its own before the measured one
    expect(cold.runs).toBeGreaterThan(0);
    expect(warm.runs).toBe(2 * cold.runs);
  }, 120_000);

  it('--trace-ratio with a running cluster is a configuration error (exit 2)', async () => {
    const { code, stderr } = await runCli(['bench', '--substrate', 'live', '--cluster-dir', cluster.dir, '--trace-ratio', '2%']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--trace-ratio: the running cluster in .* has its tracing set already/);
  });

  it('--floor-ops and --floor-rounds on sim are configuration errors (exit 2), both listed', async () => {
    const { code, stderr } = await runCli(['bench', '--floor-ops', '10', '--floor-rounds', '3']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--floor-ops: the transport floor is a live figure/);
    expect(stderr).toMatch(/--floor-rounds: the transport floor is a live figure/);
  });
});
