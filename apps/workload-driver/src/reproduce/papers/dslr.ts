// DSLR (SIGMOD '18), evaluation §6: 16 lock-manager nodes and 16 client nodes × 4 workers;
// microbenchmark of one lock per transaction, shared with probability ρ, power-law skew α
// (DSLR §6.1, A.4); TPC-C with 10 (low contention) or 1 (high) warehouse per LM node.
import type { ExperimentDef, PaperDef, Scale, SeriesDef } from '../experiment.js';
import { jobOf, lowerAt, micro, ratioAt, transactional } from '../experiment.js';

const LM_NODES = 16;
const CLIENT_NODES = 16;
const CLIENTS = CLIENT_NODES * 4;
/** 100 M per LM node in the paper; 1 M over all here — under α ≥ 1.5 the hot set is a handful of ids. */
const LOCKS = 1_000_000;
const OPERATIONS: Record<Scale, number> = { full: 40_000, quick: 8_000, smoke: 2_500 };
const TXNS: Record<Scale, number> = { full: 20_000, quick: 4_000, smoke: 600 };

const DSLR: SeriesDef = { name: 'DSLR', protocol: 'dslr' };
const DRTM: SeriesDef = { name: 'DrTM', protocol: 'drtm' };
/** Retry-on-Fail: a CAS reader-writer lock that retries a failed CAS at once. */
const RETRY_ON_FAIL: SeriesDef = { name: 'Retry-on-Fail', protocol: 'caslock', options: { variant: 'rw' } };
const N_COSED: SeriesDef = { name: 'N-CoSED', protocol: 'ncosed' };
const TRADITIONAL: SeriesDef = { name: 'Traditional', protocol: 'traditional' };
const SERIES = [DSLR, DRTM, RETRY_ON_FAIL, N_COSED, TRADITIONAL];

const PARAMS = { lmNodes: LM_NODES, clientNodes: CLIENT_NODES, clients: CLIENTS, locks: LOCKS, paperLocksPerLm: 100_000_000, sharedProbability: 0.5, thinkNs: 0 };

const skewJob = (series: SeriesDef, alpha: number, scale: Scale) =>
  jobOf(series, { spec: micro({ clients: CLIENTS, locks: LOCKS, readRatio: 0.5, distribution: { zipf: alpha }, operations: OPERATIONS[scale] }), computeNodes: CLIENT_NODES, memoryNodes: LM_NODES });

// Mechanisms we believe for the gaps: the memory node NIC ceilings of the paper cost model, and the
// paper's 1.8× is an average over baselines and workloads rather than one figure's point.
const DRTM_NOTE = 'not a like-for-like number: the paper\'s 1.8× averages every baseline and workload; DrTM\'s writers here wait out 1 ms read leases (its default) on the hot locks, which sets the gap at high skew';
const RETRY_NOTE = 'modelling gap (believed): under the paper cost model Retry-on-Fail\'s CAS retries do take the memory node\'s atomic ceiling, but DSLR\'s FAA tickets and READ polls (ω = 2 µs per ticket ahead) take it too, and its waiters idle between polls, so on TPC-C the two come out even; the starvation DSLR A.1 describes shows in the tail (p99.9), not in throughput';

const skew14: ExperimentDef = {
  id: 'dslr-fig14-tail',
  paper: 'dslr',
  figure: 'DSLR Fig. 14 (p99.9)',
  title: 'p99.9 acquire latency as the power-law skew α grows (ρ = 0.5)',
  params: PARAMS,
  x: { field: 'alpha', label: 'skew α', scale: 'linear' },
  y: { field: 'p999Us', label: 'p99.9 acquire latency (µs)', scale: 'log' },
  xs: { full: [1.5, 2, 2.5, 3], quick: [1.5, 3], smoke: [1.5, 3] },
  series: SERIES,
  claims: [
    { id: 'tail-vs-drtm', text: 'DrTM/DSLR p99.9 at the highest skew (paper: up to 46.7×, Fig. 8c)', kind: 'ratio', paper: 46.7, uses: ['DSLR', 'DrTM'], ours: lowerAt('DSLR', 'DrTM', 'last'), note: DRTM_NOTE },
    { id: 'tail-vs-retry', text: 'Retry-on-Fail/DSLR p99.9 at the highest skew (paper: up to 46.7×, Fig. 8c)', kind: 'ratio', paper: 46.7, uses: ['DSLR', 'Retry-on-Fail'], ours: lowerAt('DSLR', 'Retry-on-Fail', 'last'), note: RETRY_NOTE },
  ],
  job: (series, x, scale) => skewJob(series, x, scale),
};

const skew14Throughput: ExperimentDef = {
  ...skew14,
  id: 'dslr-fig14-throughput',
  figure: 'DSLR Fig. 14 (throughput)',
  title: 'Throughput as the power-law skew α grows (ρ = 0.5)',
  y: { field: 'goodputMops', label: 'throughput (M txn/s, one lock each)', scale: 'linear' },
  claims: [
    { id: 'vs-drtm', text: 'DSLR/DrTM throughput at the highest skew (paper: 1.8× average gain)', kind: 'ratio', paper: 1.8, uses: ['DSLR', 'DrTM'], ours: ratioAt('DSLR', 'DrTM', 'last'), note: DRTM_NOTE },
  ],
};

/** Traditional's manager CPU is a stated assumption (1 µs per request, one thread per LM node). */
const TRADITIONAL_NOTE =
  "depends on hardware we model by assumption: Traditional's lock manager costs 1 µs of server CPU per request on one thread per LM node (libs/locks/traditional), which sets its ceiling; the paper's manager CPU and thread count are not given";

// TPC-C (DSLR §6.2, Fig. 8): x = warehouses per LM node.
const tpcc8: ExperimentDef = {
  id: 'dslr-fig8-tpcc',
  paper: 'dslr',
  figure: 'DSLR Fig. 8a',
  title: 'TPC-C committed transactions/s at high (1 warehouse per LM) and low (10) contention',
  params: { lmNodes: LM_NODES, clientNodes: CLIENT_NODES, clients: CLIENTS, executeNs: 7_000, abortAfterMs: 10 },
  x: { field: 'warehousesPerLm', label: 'warehouses per LM node', scale: 'log' },
  y: { field: 'committedKtps', label: 'committed transactions (K/s)', scale: 'linear' },
  xs: { full: [1, 10], quick: [1, 10], smoke: [1, 10] },
  series: SERIES,
  claims: [
    { id: 'high-vs-drtm', text: 'DSLR/DrTM TPC-C throughput, high contention (1.8–2.5×)', kind: 'ratio', paper: 1.8, uses: ['DSLR', 'DrTM'], ours: ratioAt('DSLR', 'DrTM', 1), note: DRTM_NOTE },
    { id: 'high-vs-retry', text: 'DSLR/Retry-on-Fail TPC-C throughput, high contention (1.8–2.5×)', kind: 'ratio', paper: 1.8, uses: ['DSLR', 'Retry-on-Fail'], ours: ratioAt('DSLR', 'Retry-on-Fail', 1), note: RETRY_NOTE },
    { id: 'low-vs-traditional', text: 'DSLR/Traditional TPC-C throughput, low contention', kind: 'ratio', paper: 2.8, uses: ['DSLR', 'Traditional'], ours: ratioAt('DSLR', 'Traditional', 10), note: TRADITIONAL_NOTE },
  ],
  job: (series, x, scale) =>
    jobOf(series, { spec: transactional(CLIENTS, TXNS[scale], { workload: { kind: 'tpcc', warehouses: x * LM_NODES }, executeNs: 7_000 }), computeNodes: CLIENT_NODES, memoryNodes: LM_NODES }),
};

export const DSLR_PAPER: PaperDef = {
  paper: 'dslr',
  title: 'DSLR (decentralized and starvation-free RDMA lock management)',
  experiments: [skew14, skew14Throughput, tpcc8],
};
