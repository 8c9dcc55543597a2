// ShiftLock (FAST '25), evaluation §4: 5 client machines × 48 clients = 240, 10 M locks, Zipf 0.99,
// zero-length critical section; WI = 50 % reads, RI = 95 % reads (ShiftLock §4.1–4.2).
import type { ExperimentDef, Lookup, PaperDef, Scale, SeriesDef } from '../experiment.js';
import { jobOf, micro, ratioAt, reductionAt, transactional } from '../experiment.js';

const CLIENTS = 240;
const CLIENT_MACHINES = 5;
/** 10 M in the paper; 1 M here keeps the sim's lock table small — Zipf 0.99 concentrates the load on the first few thousand ids either way. */
const LOCKS = 1_000_000;
const OPERATIONS: Record<Scale, number> = { full: 40_000, quick: 8_000, smoke: 2_500 };
const TXNS: Record<Scale, number> = { full: 20_000, quick: 4_000, smoke: 600 };

const SHIFTLOCK: SeriesDef = { name: 'ShiftLock', protocol: 'shiftlock' };
const MCS: SeriesDef = { name: 'MCS', protocol: 'mcs' };
const CAS_B: SeriesDef = { name: 'CAS-B', protocol: 'caslock', options: { variant: 'rw', backoff: true } };
const DSLR: SeriesDef = { name: 'DSLR', protocol: 'dslr' };
const DRTM: SeriesDef = { name: 'DrTM', protocol: 'drtm' };
// Baselines added in parallel: present in a build that has them, skipped with a note until then.
const RMA_RW: SeriesDef = { name: 'RMA-RW', protocol: 'rma-rw' };
const RPC: SeriesDef = { name: 'RPC', protocol: 'rpc' };

const PARAMS = { clients: CLIENTS, clientMachines: CLIENT_MACHINES, locks: LOCKS, paperLocks: 10_000_000, distribution: 'zipf:0.99', csNs: 0, memoryNodes: 1 };

function microJob(series: SeriesDef, scale: Scale, readRatio: number, locks = LOCKS) {
  return jobOf(series, { spec: micro({ clients: CLIENTS, locks, readRatio, distribution: { zipf: 0.99 }, operations: OPERATIONS[scale] }), computeNodes: CLIENT_MACHINES, memoryNodes: 1 });
}

const WI = 0.5;
const RI = 0.95;
// Mechanisms we believe for the gaps. Under the default `paper` cost model (docs/cost-model.md) the
// memory node's NIC has inbound ceilings (8 M atomics/s, from DecLock's ConnectX-4) and a 16-byte
// extended atomic holds its words 615 ns against 385 ns for CAS.
/** RMA-RW does the paper's work per cycle; the gap to ShiftLock is time, not verbs. */
const RMARW_NOTE =
  "RMA-RW's verbs per cycle match the paper's (WI: 2.95 atomics and 1.89 READs against about 2.95 and 1.61), so the larger gap is time, not work: each writer handover in its MCS queue is a remote WRITE and a poll, and ShiftLock's cheaper handover gains more here than on the paper's testbed (not isolated further)";
const NIC_NOTE = 'modelling gap (believed): under the paper cost model both locks run into the memory node\'s atomic ceiling (8 M/s, derived from DecLock\'s ConnectX-4; ShiftLock\'s testbed is a ConnectX-5) at about two atomics per cycle, so neither pulls ahead on goodput, and MCS hands over by CN–CN message while ShiftLock\'s 16-byte atomics hold the hot word 615 ns; with --cost-model ideal (no ceiling) ShiftLock leads, 3.16× RI at --quick';
const SHORT_RUN_NOTE = 'the paper\'s effect (6.9 %) is below what a run of this length resolves; transaction goodput here is set by the slowest client of a short run';

const micro4: ExperimentDef = {
  id: 'shiftlock-fig4',
  paper: 'shiftlock',
  figure: 'ShiftLock Fig. 4',
  title: 'Goodput under Zipf 0.99, write-intensive (50 % reads) and read-intensive (95 % reads)',
  params: PARAMS,
  x: { field: 'readRatio', label: 'read ratio', scale: 'linear' },
  y: { field: 'goodputMops', label: 'goodput (M acquires/s)', scale: 'linear' },
  xs: { full: [WI, RI], quick: [WI, RI], smoke: [WI, RI] },
  series: [SHIFTLOCK, MCS, CAS_B, DSLR, DRTM, RMA_RW, RPC],
  claims: [
    { id: 'vs-mcs-wi', text: 'ShiftLock/MCS goodput, Zipf WI', kind: 'ratio', paper: 1.65, uses: ['ShiftLock', 'MCS'], ours: ratioAt('ShiftLock', 'MCS', WI), note: NIC_NOTE },
    { id: 'vs-mcs-ri', text: 'ShiftLock/MCS goodput, Zipf RI', kind: 'ratio', paper: 3.62, uses: ['ShiftLock', 'MCS'], ours: ratioAt('ShiftLock', 'MCS', RI), note: NIC_NOTE },
    { id: 'vs-rmarw-wi', text: 'ShiftLock/RMA-RW goodput, Zipf WI', kind: 'ratio', paper: 1.27, uses: ['ShiftLock', 'RMA-RW'], ours: ratioAt('ShiftLock', 'RMA-RW', WI), note: RMARW_NOTE },
    { id: 'vs-rmarw-ri', text: 'ShiftLock/RMA-RW goodput, Zipf RI', kind: 'ratio', paper: 1.26, uses: ['ShiftLock', 'RMA-RW'], ours: ratioAt('ShiftLock', 'RMA-RW', RI), note: RMARW_NOTE },
  ],
  job: (series, x, scale) => microJob(series, scale, x),
};

const tail5: ExperimentDef = {
  ...micro4,
  id: 'shiftlock-fig5-p99',
  figure: 'ShiftLock Fig. 5',
  title: 'p99 acquire latency under Zipf 0.99, WI and RI',
  y: { field: 'p99Us', label: 'p99 acquire latency (µs)', scale: 'log' },
  claims: [
    { id: 'p99-vs-mcs-wi', text: 'ShiftLock p99 reduction vs MCS, Zipf WI', kind: 'reduction', paper: 6.25, uses: ['ShiftLock', 'MCS'], ours: reductionAt('ShiftLock', 'MCS', WI), note: NIC_NOTE },
    { id: 'p99-vs-mcs-ri', text: 'ShiftLock p99 reduction vs MCS, Zipf RI', kind: 'reduction', paper: 76.6, uses: ['ShiftLock', 'MCS'], ours: reductionAt('ShiftLock', 'MCS', RI), note: NIC_NOTE },
  ],
};

/** ShiftLock over the best of the others at x. */
const overBest = (others: readonly string[], at: 'first' | 'last') => (y: Lookup, xs: readonly number[]) => {
  const x = at === 'first' ? xs[0]! : xs[xs.length - 1]!;
  return y('ShiftLock', x) / Math.max(...others.map((o) => y(o, x)).filter(Number.isFinite));
};

const locks7: ExperimentDef = {
  id: 'shiftlock-fig7-locks',
  paper: 'shiftlock',
  figure: 'ShiftLock Fig. 7',
  title: 'Goodput as the lock count grows, Zipf 0.99 WI',
  params: { ...PARAMS, readRatio: WI },
  x: { field: 'locks', label: 'locks', scale: 'log' },
  y: { field: 'goodputMops', label: 'goodput (M acquires/s)', scale: 'linear' },
  xs: { full: [1_000, 10_000, 100_000, 1_000_000], quick: [1_000, 100_000], smoke: [1_000, 100_000] },
  series: [SHIFTLOCK, MCS, CAS_B, DSLR],
  claims: [
    { id: 'over-best-1k', text: 'ShiftLock/best baseline goodput at 1 K locks', kind: 'ratio', paper: 1.52, uses: ['ShiftLock', 'MCS', 'CAS-B', 'DSLR'], ours: overBest(['MCS', 'CAS-B', 'DSLR'], 'first'), note: NIC_NOTE },
    { id: 'over-best-most', text: 'ShiftLock/best baseline goodput at the most locks (paper: 10 M)', kind: 'ratio', paper: 1.38, uses: ['ShiftLock', 'MCS', 'CAS-B', 'DSLR'], ours: overBest(['MCS', 'CAS-B', 'DSLR'], 'last'), note: NIC_NOTE },
  ],
  job: (series, x, scale) => microJob(series, scale, WI, x),
};

// Transactions (ShiftLock §4.4): TATP and TPC-C under strict 2PL, execution 2.8 µs / 7 µs.
const TATP = 0;
const TPCC = 1;
const txn10: ExperimentDef = {
  id: 'shiftlock-fig10-txn',
  paper: 'shiftlock',
  figure: 'ShiftLock Fig. 10',
  title: 'Committed transactions/s: TATP (x = 0) and TPC-C (x = 1), 240 clients',
  params: { clients: CLIENTS, clientMachines: CLIENT_MACHINES, tatpSubscribers: 100_000, tpccWarehouses: 10, tatpExecuteNs: 2_800, tpccExecuteNs: 7_000, abortAfterMs: 10 },
  x: { field: 'workload', label: 'workload (0 TATP, 1 TPC-C)', scale: 'linear' },
  y: { field: 'committedKtps', label: 'committed transactions (K/s)', scale: 'linear' },
  xs: { full: [TATP, TPCC], quick: [TATP, TPCC], smoke: [TATP, TPCC] },
  series: [SHIFTLOCK, MCS, CAS_B, DSLR, DRTM, RMA_RW],
  claims: [
    { id: 'tatp-vs-cas', text: 'ShiftLock/CAS goodput, TATP', kind: 'ratio', paper: 1.069, uses: ['ShiftLock', 'CAS-B'], ours: ratioAt('ShiftLock', 'CAS-B', TATP), note: SHORT_RUN_NOTE },
    { id: 'tatp-vs-mcs', text: 'ShiftLock/MCS goodput, TATP', kind: 'ratio', paper: 1.069, uses: ['ShiftLock', 'MCS'], ours: ratioAt('ShiftLock', 'MCS', TATP), note: SHORT_RUN_NOTE },
    { id: 'tpcc-over-best', text: 'ShiftLock/best other lock goodput, TPC-C (range 1.09–2.14×)', kind: 'ratio', paper: 1.09, uses: ['ShiftLock', 'MCS', 'CAS-B', 'DSLR', 'DrTM'], ours: overBest(['MCS', 'CAS-B', 'DSLR', 'DrTM'], 'last'), note: SHORT_RUN_NOTE },
  ],
  job: (series, x, scale) =>
    jobOf(series, {
      spec: x === TATP ? transactional(CLIENTS, TXNS[scale], { workload: { kind: 'tatp', subscribers: 100_000 }, executeNs: 2_800 }) : transactional(CLIENTS, TXNS[scale], { workload: { kind: 'tpcc', warehouses: 10 }, executeNs: 7_000 }),
      computeNodes: CLIENT_MACHINES,
      memoryNodes: 1,
    }),
};

/** ShiftLock Table 4 (WI, 240 clients): the first atomic of a writer's acquire; retry storms lengthen the NIC's same-address queue. */
const CAS_NB: SeriesDef = { name: 'CAS-NB', protocol: 'caslock', options: { variant: 'rw' } };
const BREAKDOWN_NOTE =
  'modelling gap (believed): the sim NIC serialises same-address atomics but READ polls and atomics on other words do not queue behind them, and there is no inbound IOPS ceiling by default, so retry storms slow the first atomic less than on the paper\'s RNIC';
const breakdown4: ExperimentDef = {
  id: 'shiftlock-table4-breakdown',
  paper: 'shiftlock',
  figure: 'ShiftLock Table 4',
  title: 'Writer acquire: mean µs of the initial atomic (IA), Zipf 0.99 WI, 240 clients',
  params: { ...PARAMS, readRatio: WI },
  x: { field: 'clients', label: 'clients', scale: 'linear' },
  y: { field: 'writerIaUs', label: 'writer IA (µs, mean)', scale: 'log' },
  xs: { full: [CLIENTS], quick: [CLIENTS], smoke: [CLIENTS] },
  series: [SHIFTLOCK, CAS_B, CAS_NB, DSLR],
  claims: [
    { id: 'ia-casnb', text: "CAS-NB's CAS over ShiftLock's initial atomic, WI", kind: 'ratio', paper: 15.39, uses: ['CAS-NB', 'ShiftLock'], ours: ratioAt('CAS-NB', 'ShiftLock', 'last'), note: BREAKDOWN_NOTE },
    { id: 'ia-dslr', text: "DSLR's FAA over ShiftLock's initial atomic, WI", kind: 'ratio', paper: 3.1, uses: ['DSLR', 'ShiftLock'], ours: ratioAt('DSLR', 'ShiftLock', 'last'), note: BREAKDOWN_NOTE },
  ],
  job: (series, x, scale) => jobOf(series, { spec: micro({ clients: x, locks: LOCKS, readRatio: WI, distribution: { zipf: 0.99 }, operations: OPERATIONS[scale] }), computeNodes: CLIENT_MACHINES, memoryNodes: 1 }),
};

export const SHIFTLOCK_PAPER: PaperDef = {
  paper: 'shiftlock',
  title: 'ShiftLock (handover reader-writer locking over RDMA)',
  experiments: [micro4, tail5, locks7, txn10, breakdown4],
};
