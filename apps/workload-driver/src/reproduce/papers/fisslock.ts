// FissLock, evaluation §7: 8 nodes, 160 clients on 1 M locks for lock granting (§7.3), TATP with
// 160 clients (§7.4). Resource fairness (§7.1): SrvLock and NetLock serve from one dedicated node
// with 8 lock-manager cores and run clients on the other 7; ParLock and FissLock give every node
// one lock-manager core. A lock-manager core spends 1 µs per packet (a DPDK lock server's order).
import type { ExperimentDef, LockManagerCpuPlan, Lookup, PaperDef, RecoveryPhase, Scale, SeriesDef } from '../experiment.js';
import { jobOf, maxRatio, maxReduction, micro, reductionAt, transactional } from '../experiment.js';

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

// TPC-C (§7.4, Fig. 15): 1 200 clients, 10 µs execution, 2PL, aborts after 10 ms. FissLock-Local
// is FissLock with ParLock's placement (--opt placement=home: agents parked at the lock's home).
// The paper takes warehouses per client from prior work without the number; we give every node 10
// warehouses (80), and place them as ParLock places locks (tpcc colocate: a warehouse's locks are
// homed on its clients' node), so ~90 % of transactions are local as in the paper. SrvLock and
// NetLock are locality-unaware and keep the clients' warehouses uniform.
const TPCC_CLIENTS = 1_200;
const TPCC_WAREHOUSES = 80;
const TPCC_TXNS: Record<Scale, number> = { full: 24_000, quick: 6_000, smoke: 600 };
// the sim numbers compute nodes after the memory node: 1…NODES
const COMPUTE_IDS = Array.from({ length: NODES }, (_, i) => 1 + i);
const FISSLOCK_LOCAL: SeriesDef = { ...FISSLOCK, name: 'FissLock-Local', options: { ...FISSLOCK.options, placement: 'home' } };
const tpccJob = (series: SeriesDef, scale: Scale) =>
  jobOf(series, {
    spec: transactional(TPCC_CLIENTS, TPCC_TXNS[scale], { workload: { kind: 'tpcc', warehouses: TPCC_WAREHOUSES, ...(series.dedicatedServer ? {} : { colocate: COMPUTE_IDS }) }, executeNs: 10_000 }),
    computeNodes: NODES,
    memoryNodes: 1,
    switchLinks: 'fifo',
  });
const TPCC_PARAMS = { nodes: NODES, clients: TPCC_CLIENTS, warehouses: TPCC_WAREHOUSES, placement: 'ParLock, FissLock, FissLock-Local: warehouse w on node w mod 8 with its clients; SrvLock, NetLock: uniform', executeNs: 10_000, abortAfterMs: 10, lockManagerPacketNs: PACKET_NS };
const LOCALITY_NOTE = 'FissLock-Local\'s mechanism is ours (the paper gives none): an idle agent parks at its lock\'s home instead of freeing the lock';
const PARLOCK_LATENCY_NOTE = 'ours is the mean acquire latency over all transactions, not NEW and PAY transaction latency; we believe ParLock loses it because each of its home requests takes a packet time (1 µs) on its node\'s one lock-manager core, 150 clients per core, where a parked FissLock-Local agent grants in the client\'s own call and FissLock\'s switch grants take no lock-manager packet';
const tpcc: ExperimentDef = {
  id: 'fisslock-tpcc',
  paper: 'fisslock',
  figure: 'FissLock §7.4 (TPC-C, Fig. 15)',
  title: 'TPC-C committed transactions/s, 1 200 clients, 80 warehouses',
  params: TPCC_PARAMS,
  x: { field: 'workload', label: 'TPC-C', scale: 'linear' },
  y: { field: 'committedKtps', label: 'committed transactions (K/s)', scale: 'linear' },
  xs: { full: [0], quick: [0], smoke: [0] },
  series: [FISSLOCK, FISSLOCK_LOCAL, PARLOCK, SRVLOCK, NETLOCK],
  claims: [
    { id: 'tpcc-local-vs-parlock', text: 'FissLock-Local/ParLock TPC-C throughput', kind: 'ratio', paper: 1.08, uses: ['FissLock-Local', 'ParLock'], ours: maxRatio('FissLock-Local', 'ParLock'), note: LOCALITY_NOTE },
    { id: 'tpcc-vs-srvlock', text: 'FissLock/SrvLock TPC-C throughput', kind: 'ratio', paper: 2.36, uses: ['FissLock', 'SrvLock'], ours: maxRatio('FissLock', 'SrvLock'), note: QUEUE_NOTE },
    { id: 'tpcc-vs-netlock', text: 'FissLock/NetLock TPC-C throughput', kind: 'ratio', paper: 2.28, uses: ['FissLock', 'NetLock'], ours: maxRatio('FissLock', 'NetLock'), note: QUEUE_NOTE },
  ],
  job: (series, _x, scale) => tpccJob(series, scale),
};
const tpccLatency: ExperimentDef = {
  id: 'fisslock-tpcc-latency',
  paper: 'fisslock',
  figure: 'FissLock §7.4 (TPC-C latency, Fig. 15)',
  title: 'TPC-C mean lock acquire latency, 1 200 clients, 80 warehouses',
  params: TPCC_PARAMS,
  x: { field: 'workload', label: 'TPC-C', scale: 'linear' },
  y: { field: 'meanUs', label: 'mean acquire latency (µs)', scale: 'log' },
  xs: { full: [0], quick: [0], smoke: [0] },
  series: [FISSLOCK, FISSLOCK_LOCAL, PARLOCK],
  claims: [
    { id: 'tpcc-local-latency', text: 'FissLock-Local latency reduction vs FissLock (paper: 40–60 % on NEW and PAY transactions; ours: per acquire)', kind: 'reduction', paper: 40, uses: ['FissLock-Local', 'FissLock'], ours: maxReduction('FissLock-Local', 'FissLock'), note: LOCALITY_NOTE },
    { id: 'tpcc-parlock-latency', text: 'ParLock latency reduction vs FissLock (paper: 40–60 % on NEW and PAY)', kind: 'reduction', paper: 40, uses: ['ParLock', 'FissLock'], ours: maxReduction('ParLock', 'FissLock'), note: PARLOCK_LATENCY_NOTE },
  ],
  job: (series, _x, scale) => tpccJob(series, scale),
};

/**
 * FissLock §7.6 (Fig. 16 right): uniform RM as the lock count grows past what the switch holds;
 * the excess falls back to ParLock's on-server managers. ParLock is run at every scale as the
 * reference the paper draws at 10 M locks.
 */
const LOCK_SCALES = { full: [1_000_000, 2_000_000, 5_000_000, 10_000_000], quick: [1_000_000, 10_000_000], smoke: [1_000_000] };
const lockScale: ExperimentDef = {
  id: 'fisslock-lock-scale',
  paper: 'fisslock',
  figure: 'FissLock Fig. 16 right (lock scale)',
  title: 'p90 grant time as the lock count grows, uniform RM, 160 clients',
  params: { ...PARAMS, workloads: 'uniform RM (90 % shared)', locks: 'x' },
  x: { field: 'locks', label: 'locks', scale: 'log' },
  y: { field: 'grantP90Us', label: 'p90 grant time (µs)', scale: 'log' },
  xs: LOCK_SCALES,
  series: [FISSLOCK, PARLOCK],
  claims: [
    { id: 'scale-p90-vs-parlock', text: 'FissLock p90 grant-time reduction vs ParLock at the largest lock count (10 M in the paper)', kind: 'reduction', paper: 9.9, uses: ['FissLock', 'ParLock'], ours: reductionAt('FissLock', 'ParLock', 'last'), note: QUEUE_NOTE },
  ],
  job: (series, x, scale) =>
    jobOf(series, {
      spec: micro({ clients: CLIENTS, locks: x, readRatio: 0.9, distribution: 'uniform', operations: OPERATIONS[scale], timeoutMs: 10_000 }),
      computeNodes: NODES,
      memoryNodes: 1,
      switchLinks: 'fifo',
    }),
};

// Recovery (§7.8, Fig. 17 middle): a switch and a server fail together; the paper reports no
// absolute times, only that S1 and S2 dominate and grow in proportion to the locks (every lock's
// metadata is scanned) while S3 is trivial. Real time of the production steps in one process.
const RECOVERY_MACHINES = 8;
const s12 = (y: Lookup, x: number) => y('S1', x) + y('S2', x);
const recoverySeries = (['S1', 'S2', 'S3'] as const).map((phase): SeriesDef => ({ name: phase, protocol: 'fisslock' }));
const recovery: ExperimentDef = {
  id: 'fisslock-fig17-recovery',
  paper: 'fisslock',
  figure: 'FissLock Fig. 17 middle (recovery time)',
  title: 'Recovery time per step against held locks, switch and one of 8 servers failed together',
  params: { machines: RECOVERY_MACHINES, failed: 'the switch and one server', method: 'real time of the production S1–S3 steps in one thread (no network); varies from run to run' },
  x: { field: 'heldLocks', label: 'held locks', scale: 'log' },
  y: { field: 'recoveryMs', label: 'time of the step (ms)', scale: 'log' },
  xs: { full: [1_000, 10_000, 100_000, 1_000_000], quick: [1_000, 10_000, 100_000], smoke: [1_000, 100_000] },
  series: recoverySeries,
  claims: [
    {
      id: 's12-proportional',
      text: 'S1+S2 time at 100 000 held locks over 1 000 (grows in proportion to the locks: 100×)',
      kind: 'ratio',
      paper: 100,
      uses: ['S1', 'S2'],
      ours: (y) => s12(y, 100_000) / s12(y, 1_000),
      note: 'measured in real time on this machine, so above or below linear by the host: at 100 000 locks the agent maps and client records outgrow the CPU caches and the garbage collector runs inside the steps (the 1 000-lock point is the fastest of 10 repetitions, the 100 000-lock point of 2)',
    },
    {
      id: 's3-trivial',
      text: 'S3 time below S1+S2 at the most held locks (S3 only touches held locks: trivial)',
      kind: 'reduction',
      paper: 100,
      uses: ['S1', 'S2', 'S3'],
      ours: (y, xs) => 100 * (1 - y('S3', xs[xs.length - 1]!) / s12(y, xs[xs.length - 1]!)),
      note: 'S3 writes every held lock\'s registers through the control-plane API, one call per register, which is not free here',
    },
  ],
  job: (series, x) => ({ protocol: 'fisslock', options: {}, spec: micro({ clients: 0, locks: 1, readRatio: 0, distribution: 'uniform', operations: 0 }), computeNodes: RECOVERY_MACHINES, memoryNodes: 1, recovery: { heldLocks: x, machines: RECOVERY_MACHINES, phase: series.name as RecoveryPhase } }),
};

export const FISSLOCK_PAPER: PaperDef = {
  paper: 'fisslock',
  title: 'FissLock (switch-decided lock grants with migrating agents)',
  experiments: [grant50, grant90, throughput14, tatp, tpcc, tpccLatency, lockScale, recovery],
};
