// Figures of the switch lock family (issue 4), measured on this machine:
//   node tools/bench/dist/switch-figures.js [--ops N] [--quick] [--links fifo|jittered]
//     [--lm-packet-ns N] [--lm-cores-server N] [--lm-cores-node N] [--skip-live] [--skip-sim] [--out FILE]
// (--skip-sim keeps the sim rows already in the output file and measures only the live figure)
// (a) sim: the FissLock paper's microbenchmark — update-heavy, read-mostly, read-only × uniform,
//     Zipf θ 0.99; 160 clients on 1 M locks; fisslock, netlock, srvlock, parlock: GRANT TIME
//     p50/p90/p99 (acquire latency minus the wait behind conflicting holders, from the history: see
//     switch-sim-run.ts), acquire latency p50/p99 beside it, throughput and the share of grants the
//     switch decided.
// Lock-manager CPU (spec §10.2 resource fairness): every packet a lock-manager role handles costs
// `--lm-packet-ns` (default 1 000 ns; 0 = the model off) on one of its machine's cores, FIFO:
// SrvLock's/NetLock's dedicated server node has `--lm-cores-server` (default 8) and runs no clients;
// every ParLock/FissLock node has `--lm-cores-node` (default 1). Why 1 µs: a DPDK lock server spends
// on the order of a microsecond per request, and 8 such cores serve 8 M packets/s, i.e. 4 M
// acquire+release pairs/s — the size of the paper's SrvLock (about 3 M rps, FissLock §7.5).
// (b) live: fisslock acquire latency without contention ÷ the raw NATS round trip, in one run.
// Links: `fifo` (default) keeps each machine–switch link in send order, as one Ethernet link does,
// and FissLock then runs without its per-link pacing (pacingNs 0), which only exists to keep a link
// FIFO under `jittered` links (the sim default, which tests keep for its extra reorderings).
// Prints a table and writes bench-results/switch-figures.json (or --out).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { SWITCH_SYSTEMS, fissLockRtoNs, runSwitchSim } from './switch-sim-run.js';
import type { SwitchSimRow } from './switch-sim-run.js';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { liveOptions, measureTransport, repoRootForBench, runLive, startLocalCluster, stopLocalCluster } from '@lockfabric/workload-driver';

const { values } = parseArgs({
  options: {
    ops: { type: 'string' },
    links: { type: 'string' },
    quick: { type: 'boolean' },
    'lm-packet-ns': { type: 'string' },
    'lm-cores-server': { type: 'string' },
    'lm-cores-node': { type: 'string' },
    'skip-live': { type: 'boolean' },
    'skip-sim': { type: 'boolean' },
    out: { type: 'string' },
  },
});
const quick = values.quick === true;
const links = values.links ?? 'fifo';
if (links !== 'fifo' && links !== 'jittered') throw new Error(`--links must be fifo or jittered, got ${links}`);
// 40 000 operations a run (4 000 with --quick). FissLock runs with an RTO that covers the
// lock-manager queue its ACKs wait in (switch-sim-run.ts fissLockRtoNs: 1 ms at 1 µs per packet);
// with the spec's 200 µs, read-mostly Zipf resent spuriously into the hot agent pool's queue and
// collapsed past ~10 000 operations (README, "Lock-manager CPU").
const operations = Number(values.ops ?? (quick ? 4_000 : 40_000));
const whole = (name: string, raw: string | undefined, fallback: number, min: number): number => {
  const n = Number(raw ?? fallback);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${raw}`);
  return n;
};
const lmPacketNs = whole('lm-packet-ns', values['lm-packet-ns'], 1_000, 0);
const lmCoresServer = whole('lm-cores-server', values['lm-cores-server'], 8, 1);
const lmCoresNode = whole('lm-cores-node', values['lm-cores-node'], 1, 1);
const root = repoRootForBench();
const outFile = values.out ?? join(root, 'bench-results', 'switch-figures.json');
const log = (line: string) => process.stderr.write(line + '\n');

const WORKLOADS = [
  { name: 'UH', readRatio: 0.5 },
  { name: 'RM', readRatio: 0.9 },
  { name: 'RO', readRatio: 1 },
] as const;
const DISTRIBUTIONS = [
  { name: 'uniform', distribution: 'uniform' as const },
  { name: 'zipf', distribution: { zipf: 0.99 } },
] as const;
const CLIENTS = 160;
const LOCKS = 1_000_000;
const COMPUTE_NODES = 8;

interface SimRow extends SwitchSimRow {
  readonly workload: string;
  readonly distribution: string;
  readonly wallMs: number;
}

const previous =
  values['skip-sim'] === true && existsSync(outFile) ? (JSON.parse(readFileSync(outFile, 'utf8')) as { sim?: { operationsPerRun?: number; lockManagerCpu?: unknown; rows?: SimRow[] } }) : undefined;
const rows: SimRow[] = previous?.sim?.rows ?? [];
const simOperations = previous?.sim?.operationsPerRun ?? operations;
const lockManagerCpu = previous?.sim?.lockManagerCpu ?? (lmPacketNs > 0 ? { packetNs: lmPacketNs, coresServer: lmCoresServer, coresNode: lmCoresNode } : 'off');
const lmDescription = lmPacketNs > 0 ? `lock-manager CPU ${lmPacketNs} ns/packet (server ${lmCoresServer} cores, node ${lmCoresNode})` : 'lock-manager CPU off';
if (values['skip-sim'] !== true) log(`(a) sim microbenchmark: ${CLIENTS} clients, ${LOCKS.toLocaleString('en')} locks, ${operations.toLocaleString('en')} operations per run, ${COMPUTE_NODES} compute nodes, ${links} links, ${lmDescription}`);
for (const workload of values['skip-sim'] === true ? [] : WORKLOADS) {
  for (const dist of DISTRIBUTIONS) {
    for (const system of SWITCH_SYSTEMS) {
      const spec: WorkloadSpec = { clients: CLIENTS, locks: LOCKS, readRatio: workload.readRatio, distribution: dist.distribution, operations, thinkNs: 0, criticalSectionNs: 0, seed: 7, timeoutMs: 10_000 };
      const started = performance.now();
      const measured = await runSwitchSim({ system, spec, computeNodes: COMPUTE_NODES, links, lmPacketNs, lmCoresServer, lmCoresNode });
      const row: SimRow = { workload: workload.name, distribution: dist.name, ...measured, wallMs: Math.round(performance.now() - started) };
      rows.push(row);
      log(
        `  ${workload.name}/${dist.name}/${system}: grant p50 ${row.grantUs.p50.toFixed(1)} µs, acquire p50 ${row.acquireUs.p50.toFixed(1)} µs, ${Math.round(row.throughputOpsPerSec)} ops/s, switch ${(100 * row.switchGrantShare).toFixed(1)}% (${row.wallMs} ms)`,
      );
    }
  }
}

let live: Record<string, unknown> | undefined;
if (values['skip-live'] !== true) {
  log('(b) live: fisslock without contention vs the raw NATS round trip…');
  const dir = join(root, '.lockfabric', `switch-figures-${process.pid}`);
  try {
    const state = await startLocalCluster({ dir, lockCount: 65_536, clientsPerComputeNode: 16, withCoordinator: false, switchProgram: 'fisslock' });
    try {
    const transport = await measureTransport(quick ? 2_000 : 8_000, state.natsUrl);
    // One client, many locks, exclusive: every acquire is ① (free lock, decided by the switch).
    const spec: WorkloadSpec = { clients: 1, locks: 60_000, readRatio: 0, distribution: 'uniform', operations: quick ? 500 : 3_000, thinkNs: 0, criticalSectionNs: 0, seed: 3, timeoutMs: 10_000 };
    const run = await runLive({ state, protocol: 'fisslock', protocolOptions: liveOptions('fisslock'), spec, recordHistory: true });
    live = {
      natsRttUs: transport.natsRttUs,
      acquireUsP50: run.summary.latencyUs.p50,
      acquireUsMean: run.summary.latencyUs.mean,
      ratioP50ToNatsRtt: run.summary.latencyUs.p50 / transport.natsRttUs,
      switchGrantShare: run.switch?.switchGrantShare,
      acquires: run.summary.acquires,
      checkerOk: run.verdict?.ok,
    };
    } finally {
      await stopLocalCluster(dir);
    }
  } catch (error) {
    // The sim rows are still written; the live figure says why it is missing.
    live = { error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
    log(`live figure failed: ${String(live['error'])}`);
  }
}

const figures = {
  machine: { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString() },
  sim: { clients: CLIENTS, locks: LOCKS, links, operationsPerRun: simOperations, computeNodes: COMPUTE_NODES, zipfTheta: 0.99, criticalSectionNs: 0, lockManagerCpu, fissLockRtoNs: fissLockRtoNs(lmPacketNs), grantTime: 'history: acquire latency minus wait behind conflicting holders (libs/check grant-time.ts)', rows },
  ...(live ? { live } : {}),
};
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(figures, null, 2) + '\n');

const pad = (s: string, n: number) => s.padEnd(n);
const lmTitle = typeof lockManagerCpu === 'string' ? 'lock-manager CPU off' : `lock-manager CPU ${JSON.stringify(lockManagerCpu)}`;
console.log(`sim: ${CLIENTS} clients, ${LOCKS.toLocaleString('en')} locks, ${simOperations.toLocaleString('en')} operations per run, ${lmTitle}`);
console.log('grant = acquire latency minus wait behind conflicting holders; acq = acquire latency, wait included');
console.log([pad('workload', 12), pad('system', 9), pad('grant p50', 10), pad('grant p90', 10), pad('grant p99', 10), pad('acq p50', 9), pad('acq p99', 9), pad('ops/s', 10), pad('switch %', 9), 'checker'].join(' '));
for (const r of rows) {
  console.log(
    [
      pad(`${r.workload}/${r.distribution}`, 12),
      pad(r.system, 9),
      pad(r.grantUs.p50.toFixed(1), 10),
      pad(r.grantUs.p90.toFixed(1), 10),
      pad(r.grantUs.p99.toFixed(1), 10),
      pad(r.acquireUs.p50.toFixed(1), 9),
      pad(r.acquireUs.p99.toFixed(1), 9),
      pad(String(Math.round(r.throughputOpsPerSec)), 10),
      pad((100 * r.switchGrantShare).toFixed(1), 9),
      r.checkerOk ? 'ok' : 'VIOLATION',
    ].join(' '),
  );
}
if (live && live['error'] === undefined) console.log(`live: fisslock uncontended acquire p50 ${(live['acquireUsP50'] as number).toFixed(0)} µs ÷ NATS round trip ${(live['natsRttUs'] as number).toFixed(0)} µs = ${(live['ratioP50ToNatsRtt'] as number).toFixed(2)}`);
console.log(`written to ${outFile}`);
