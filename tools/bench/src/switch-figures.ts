// Figures of the switch lock family (issue 4), measured on this machine:
//   node tools/bench/dist/switch-figures.js [--ops N] [--quick] [--links fifo|jittered] [--skip-live] [--skip-sim] [--out FILE]
// (--skip-sim keeps the sim rows already in the output file and measures only the live figure)
// (a) sim: the FissLock paper's microbenchmark — update-heavy, read-mostly, read-only × uniform,
//     Zipf θ 0.99; 160 clients on 1 M locks; fisslock, netlock, srvlock, parlock: acquire latency
//     p50/p90/p99, throughput and the share of grants the switch decided.
// (b) live: fisslock acquire latency without contention ÷ the raw NATS round trip, in one run.
// Links: `fifo` (default) keeps each machine–switch link in send order, as one Ethernet link does,
// and FissLock then runs without its per-link pacing (pacingNs 0), which only exists to keep a link
// FIFO under `jittered` links (the sim default, which tests keep for its extra reorderings).
// Prints a table and writes bench-results/switch-figures.json (or --out).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { runInMemory as runWithDefinition } from '@lockfabric/harness';
import { protocolById } from '@lockfabric/lock-catalog';
import type { ClientPorts, LockPacket, SwitchPort } from '@lockfabric/ports';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { liveOptions, measureTransport, repoRootForBench, runLive, startLocalCluster, stopLocalCluster } from '@lockfabric/workload-driver';

const { values } = parseArgs({ options: { ops: { type: 'string' }, links: { type: 'string' }, quick: { type: 'boolean' }, 'skip-live': { type: 'boolean' }, 'skip-sim': { type: 'boolean' }, out: { type: 'string' } } });
const quick = values.quick === true;
const links = values.links ?? 'fifo';
if (links !== 'fifo' && links !== 'jittered') throw new Error(`--links must be fifo or jittered, got ${links}`);
const operations = Number(values.ops ?? (quick ? 4_000 : 40_000));
const root = repoRootForBench();
const outFile = values.out ?? join(root, 'bench-results', 'switch-figures.json');
type ProtocolDefinition = ReturnType<typeof protocolById>;
const log = (line: string) => process.stderr.write(line + '\n');

const SYSTEMS = ['fisslock', 'netlock', 'srvlock', 'parlock'] as const;
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

/**
 * Whether a packet a machine received is a GRANT the switch decided itself: NetLock's queue
 * grants carry its switch flag (bit 1); the FissLock decider's grants (① free, ② shared) are the
 * GRANTs without a sending agent. Server lock managers' grants are neither.
 */
function switchDecidedGrant(protocol: string, packet: LockPacket): boolean {
  if (packet.type !== 'grant') return false;
  if (protocol === 'netlock') return (packet.flags & 0b10) !== 0;
  if (protocol === 'fisslock') return packet.agent === undefined && (packet.flags & 0b10) === 0;
  return false;
}

/** The protocol with every switch port tapped: each switch-decided GRANT delivered to a machine counts once. */
function tapped(protocol: ProtocolDefinition): { protocol: ProtocolDefinition; switchGrants: () => number } {
  const seen = new WeakSet<LockPacket>();
  let grants = 0;
  const tap = (port: SwitchPort): SwitchPort => ({
    machine: port.machine,
    send: (packet) => port.send(packet),
    onPacket: (handler) =>
      port.onPacket((packet) => {
        if (!seen.has(packet)) {
          seen.add(packet);
          if (switchDecidedGrant(protocol.id, packet)) grants++;
        }
        handler(packet);
      }),
  });
  const wrap = (ports: ClientPorts): ClientPorts => (ports.switchPort ? { ...ports, switchPort: tap(ports.switchPort) } : ports);
  const compute = protocol.services?.compute;
  return {
    protocol: {
      ...protocol,
      createClient: (ports, options) => protocol.createClient(wrap(ports), options),
      ...(protocol.services ? { services: { ...protocol.services, ...(compute ? { compute: (context, options) => compute({ ...context, ports: wrap(context.ports) }, options) } : {}) } } : {}),
    },
    switchGrants: () => grants,
  };
}

interface SimRow {
  readonly system: string;
  readonly workload: string;
  readonly distribution: string;
  readonly acquireUs: { readonly p50: number; readonly p90: number; readonly p99: number };
  readonly throughputOpsPerSec: number;
  readonly switchGrantShare: number;
  readonly acquires: number;
  readonly failures: number;
  readonly checkerOk: boolean;
  readonly wallMs: number;
}

const previous = values['skip-sim'] === true && existsSync(outFile) ? (JSON.parse(readFileSync(outFile, 'utf8')) as { sim?: { operationsPerRun?: number; rows?: SimRow[] } }) : undefined;
const rows: SimRow[] = previous?.sim?.rows ?? [];
const simOperations = previous?.sim?.operationsPerRun ?? operations;
if (values['skip-sim'] !== true) log(`(a) sim microbenchmark: ${CLIENTS} clients, ${LOCKS.toLocaleString('en')} locks, ${operations.toLocaleString('en')} operations per run, ${COMPUTE_NODES} compute nodes, ${links} links`);
for (const workload of values['skip-sim'] === true ? [] : WORKLOADS) {
  for (const dist of DISTRIBUTIONS) {
    for (const system of SYSTEMS) {
      const spec: WorkloadSpec = { clients: CLIENTS, locks: LOCKS, readRatio: workload.readRatio, distribution: dist.distribution, operations, thinkNs: 0, criticalSectionNs: 0, seed: 7, timeoutMs: 10_000 };
      const { protocol, switchGrants } = tapped(protocolById(system));
      const started = performance.now();
      const protocolOptions: Record<string, number> = system === 'fisslock' && links === 'fifo' ? { pacingNs: 0 } : {};
      const result = await runWithDefinition({ substrate: 'sim', protocol, protocolOptions, spec, computeNodes: COMPUTE_NODES, switchLinks: links });
      const s = result.summary;
      const row: SimRow = {
        system,
        workload: workload.name,
        distribution: dist.name,
        acquireUs: { p50: s.latencyUs.p50, p90: s.latencyUs.p90, p99: s.latencyUs.p99 },
        throughputOpsPerSec: s.throughput,
        switchGrantShare: s.acquires > 0 ? Math.min(1, switchGrants() / s.acquires) : 0,
        acquires: s.acquires,
        failures: s.acquireFailures + s.releaseFailures,
        checkerOk: result.verdict.ok,
        wallMs: Math.round(performance.now() - started),
      };
      rows.push(row);
      log(`  ${workload.name}/${dist.name}/${system}: p50 ${row.acquireUs.p50.toFixed(1)} µs, ${Math.round(row.throughputOpsPerSec)} ops/s, switch ${(100 * row.switchGrantShare).toFixed(1)}% (${row.wallMs} ms)`);
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
  sim: { clients: CLIENTS, locks: LOCKS, links, operationsPerRun: simOperations, computeNodes: COMPUTE_NODES, zipfTheta: 0.99, criticalSectionNs: 0, rows },
  ...(live ? { live } : {}),
};
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(figures, null, 2) + '\n');

const pad = (s: string, n: number) => s.padEnd(n);
console.log(`sim: ${CLIENTS} clients, ${LOCKS.toLocaleString('en')} locks, ${simOperations.toLocaleString('en')} operations per run (acquire latency includes queueing)`);
console.log([pad('workload', 12), pad('system', 9), pad('p50 µs', 9), pad('p90 µs', 9), pad('p99 µs', 9), pad('ops/s', 10), pad('switch %', 9), 'checker'].join(' '));
for (const r of rows) {
  console.log(
    [
      pad(`${r.workload}/${r.distribution}`, 12),
      pad(r.system, 9),
      pad(r.acquireUs.p50.toFixed(1), 9),
      pad(r.acquireUs.p90.toFixed(1), 9),
      pad(r.acquireUs.p99.toFixed(1), 9),
      pad(String(Math.round(r.throughputOpsPerSec)), 10),
      pad((100 * r.switchGrantShare).toFixed(1), 9),
      r.checkerOk ? 'ok' : 'VIOLATION',
    ].join(' '),
  );
}
if (live && live['error'] === undefined) console.log(`live: fisslock uncontended acquire p50 ${(live['acquireUsP50'] as number).toFixed(0)} µs ÷ NATS round trip ${(live['natsRttUs'] as number).toFixed(0)} µs = ${(live['ratioP50ToNatsRtt'] as number).toFixed(2)}`);
console.log(`written to ${outFile}`);
