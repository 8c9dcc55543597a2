// FissLock, evaluation §7: 8 nodes, 160 clients on 1 M locks for lock granting (§7.3), TATP with
// 160 clients (§7.4). Resource fairness (§7.1): SrvLock and NetLock serve from one dedicated node
// with 8 lock-manager cores and run clients on the other 7; ParLock and FissLock give every node
// one lock-manager core. A lock-manager core spends 1 µs per packet (a DPDK lock server's order).
import type { ExperimentDef, LockManagerCpuPlan, PaperDef, Scale, SeriesDef } from '../experiment.js';
import { jobOf, maxRatio, maxReduction, micro, transactional } from '../experiment.js';

const NODES = 8;
const CLIENTS = 160;
const LOCKS = 1_000_000;
const PACKET_NS = 1_000;
const OPERATIONS: Record<Scale, number> = { full: 40_000, quick: 8_000, smoke: 2_000 };
const TXNS: Record<Scale, number> = { full: 20_000, quick: 4_000, smoke: 600 };

const cpu = (work: LockManagerCpuPlan['work']): LockManagerCpuPlan => ({ packetNs: PACKET_NS, coresServer: 8, coresNode: 1, work });
// FissLock's RTO covers the lock-manager queue its ACKs wait in (1 000 packet times), backing off
// up to 8×; links stay FIFO, so its per-link pacing is off (see the FissLock README, "Timeout-free and the link").
const FISSLOCK: SeriesDef = { name: 'FissLock', protocol: 'fisslock', options: { rtoNs: 1_000 * PACKET_NS, rtoMaxBackoff: 8, pacingNs: 0 }, lockManagerCpu: cpu('agent') };
const SRVLOCK: SeriesDef = { name: 'SrvLock', protocol: 'srvlock', dedicatedServer: true, lockManagerCpu: cpu('server') };
const NETLOCK: SeriesDef = { name: 'NetLock', protocol: 'netlock', dedicatedServer: true, lockManagerCpu: cpu('server') };
const PARLOCK: SeriesDef = { name: 'ParLock', protocol: 'parlock', lockManagerCpu: cpu('server') };
const SERIES = [FISSLOCK, SRVLOCK, NETLOCK, PARLOCK];

/** x of the microbenchmark: UH, RM, RO (50 / 90 / 100 % shared) × uniform, Zipf 0.99. */
const WORKLOADS = [
  { readRatio: 0.5, zipf: false },
  { readRatio: 0.9, zipf: false },
  { readRatio: 1, zipf: false },
  { readRatio: 0.5, zipf: true },
  { readRatio: 0.9, zipf: true },
  { readRatio: 1, zipf: true },
] as const;

const PARAMS = { nodes: NODES, clients: CLIENTS, locks: LOCKS, lockManagerPacketNs: PACKET_NS, serverCores: 8, nodeCores: 1, workloads: '0 UH/uniform, 1 RM/uniform, 2 RO/uniform, 3 UH/zipf, 4 RM/zipf, 5 RO/zipf', grantTime: 'acquire latency minus wait behind conflicting holders, from the history' };

const microJob = (series: SeriesDef, x: number, scale: Scale) => {
  const w = WORKLOADS[x]!;
  return jobOf(series, {
    spec: micro({ clients: CLIENTS, locks: LOCKS, readRatio: w.readRatio, distribution: w.zipf ? { zipf: 0.99 } : 'uniform', operations: OPERATIONS[scale], timeoutMs: 10_000 }),
    computeNodes: NODES,
    memoryNodes: 1,
    switchLinks: 'fifo',
  });
};

const XS = { full: [0, 1, 2, 3, 4, 5], quick: [0, 1, 3, 4], smoke: [1, 4] };
const X_AXIS = { field: 'workload', label: 'workload (0–2 UH/RM/RO uniform, 3–5 Zipf)', scale: 'linear' } as const;
// Mechanisms we believe for the gaps: FissLock's switch grants cost no lock-manager packet, and
// the sim charges nothing for the clients' own packet I/O, which bounds FissLock in the paper.
const QUEUE_NOTE = 'modelling gap: shared and free grants decided on the switch cost FissLock no lock-manager packet, and the sim charges nothing for the clients\' own DPDK packet I/O, which bounds FissLock\'s throughput on the paper\'s testbed; the baselines pay 1 µs per packet on their lock-manager cores';

const grant50: ExperimentDef = {
  id: 'fisslock-fig13-grant',
  paper: 'fisslock',
  figure: 'FissLock Fig. 13 (median grant time)',
  title: 'Median grant time per workload, 160 clients, 1 M locks',
  params: PARAMS,
  x: X_AXIS,
  y: { field: 'grantP50Us', label: 'median grant time (µs)', scale: 'log' },
  xs: XS,
  series: SERIES,
  paperSeries: [],
  claims: [
    { id: 'p50-vs-srvlock', text: 'FissLock median grant-time reduction vs SrvLock, up to', kind: 'reduction', paper: 79.5, uses: ['FissLock', 'SrvLock'], ours: maxReduction('FissLock', 'SrvLock'), note: QUEUE_NOTE },
    { id: 'p50-vs-netlock', text: 'FissLock median grant-time reduction vs NetLock, up to', kind: 'reduction', paper: 79.1, uses: ['FissLock', 'NetLock'], ours: maxReduction('FissLock', 'NetLock'), note: QUEUE_NOTE },
    { id: 'p50-vs-parlock', text: 'FissLock median grant-time reduction vs ParLock, up to', kind: 'reduction', paper: 96.4, uses: ['FissLock', 'ParLock'], ours: maxReduction('FissLock', 'ParLock'), note: QUEUE_NOTE },
  ],
  job: microJob,
};

const grant90: ExperimentDef = {
  ...grant50,
  id: 'fisslock-fig13-grant-p90',
  figure: 'FissLock Fig. 13 (p90 grant time)',
  title: '90th-percentile grant time per workload, 160 clients, 1 M locks',
  y: { field: 'grantP90Us', label: 'p90 grant time (µs)', scale: 'log' },
  // FissLock §7.3: its 90th-percentile grant time stays under 9.42 µs in every workload (a bound, drawn at each point).
  paperSeries: [{ name: 'FissLock p90 bound (paper)', points: [0, 1, 2, 3, 4, 5].map((x) => ({ x, y: 9.42 })) }],
  claims: [
    { id: 'p90-vs-srvlock', text: 'FissLock p90 grant-time reduction vs SrvLock, up to', kind: 'reduction', paper: 89.7, uses: ['FissLock', 'SrvLock'], ours: maxReduction('FissLock', 'SrvLock'), note: QUEUE_NOTE },
    { id: 'p90-vs-parlock', text: 'FissLock p90 grant-time reduction vs ParLock, up to', kind: 'reduction', paper: 96.5, uses: ['FissLock', 'ParLock'], ours: maxReduction('FissLock', 'ParLock'), note: QUEUE_NOTE },
  ],
};

const throughput14: ExperimentDef = {
  ...grant50,
  id: 'fisslock-fig14-throughput',
  figure: 'FissLock Fig. 14 (throughput)',
  title: 'Lock-request throughput per workload, 160 clients, 1 M locks',
  y: { field: 'goodputMops', label: 'throughput (M acquires/s)', scale: 'linear' },
  paperSeries: [],
  claims: [
    { id: 'tp-vs-srvlock', text: 'FissLock/SrvLock throughput, up to', kind: 'ratio', paper: 4.79, uses: ['FissLock', 'SrvLock'], ours: maxRatio('FissLock', 'SrvLock'), note: QUEUE_NOTE },
    { id: 'tp-vs-parlock', text: 'FissLock/ParLock throughput, up to', kind: 'ratio', paper: 4.08, uses: ['FissLock', 'ParLock'], ours: maxRatio('FissLock', 'ParLock'), note: QUEUE_NOTE },
  ],
};

const tatp: ExperimentDef = {
  id: 'fisslock-tatp',
  paper: 'fisslock',
  figure: 'FissLock §7.4 (TATP)',
  title: 'TATP committed transactions/s, 160 clients, 100 000 subscribers',
  params: { nodes: NODES, clients: CLIENTS, subscribers: 100_000, executeNs: 2_000, abortAfterMs: 10, lockManagerPacketNs: PACKET_NS },
  x: { field: 'workload', label: 'TATP', scale: 'linear' },
  y: { field: 'committedKtps', label: 'committed transactions (K/s)', scale: 'linear' },
  xs: { full: [0], quick: [0], smoke: [0] },
  series: SERIES,
  claims: [
    { id: 'tatp-vs-srvlock', text: 'FissLock/SrvLock TATP throughput', kind: 'ratio', paper: 2.37, uses: ['FissLock', 'SrvLock'], ours: maxRatio('FissLock', 'SrvLock'), note: QUEUE_NOTE },
    { id: 'tatp-vs-netlock', text: 'FissLock/NetLock TATP throughput', kind: 'ratio', paper: 1.76, uses: ['FissLock', 'NetLock'], ours: maxRatio('FissLock', 'NetLock'), note: QUEUE_NOTE },
    { id: 'tatp-vs-parlock', text: 'FissLock/ParLock TATP throughput', kind: 'ratio', paper: 2.93, uses: ['FissLock', 'ParLock'], ours: maxRatio('FissLock', 'ParLock'), note: QUEUE_NOTE },
  ],
  job: (series, _x, scale) => jobOf(series, { spec: transactional(CLIENTS, TXNS[scale], { workload: { kind: 'tatp', subscribers: 100_000 }, executeNs: 2_000 }), computeNodes: NODES, memoryNodes: 1, switchLinks: 'fifo' }),
};

export const FISSLOCK_PAPER: PaperDef = {
  paper: 'fisslock',
  title: 'FissLock (switch-decided lock grants with migrating agents)',
  experiments: [grant50, grant90, throughput14, tatp],
};
