// DecLock (queue-notify locking on disaggregated memory), evaluation §6: 8 CNs × 32 clients, one
// MN, 100 000 locks, Zipf 0.99, 50 % reads, a critical section of 1 verb (DecLock §6.1–6.2).
import type { ExperimentDef, PaperDef, Scale, SeriesDef } from '../experiment.js';
import { jobOf, maxRatio, maxReduction, micro, peakOver, ratioAt, valueAt } from '../experiment.js';

/** One RDMA verb inside the critical section, as simulated time (one sim verb round trip is about 2 µs). */
const VERB_NS = 2_000;
const CLIENTS_PER_CN = 32;
const OPERATIONS: Record<Scale, number> = { full: 40_000, quick: 8_000, smoke: 2_500 };

const SERIES: readonly SeriesDef[] = [
  { name: 'CASLock', protocol: 'caslock' },
  { name: 'DSLR+', protocol: 'dslr-backoff' },
  { name: 'ShiftLock', protocol: 'shiftlock' },
  { name: 'DecLock-TF', protocol: 'declock', options: { policy: 'tf' } },
  { name: 'DecLock-PF', protocol: 'declock', options: { policy: 'pf' } },
];

const PARAMS = { clients: 256, clientsPerCN: CLIENTS_PER_CN, locks: 100_000, distribution: 'zipf:0.99', readRatio: 0.5, csVerbs: 1, csNsPerVerb: VERB_NS, memoryNodes: 1 };

/** The microbenchmark at its defaults with one knob changed; the clients fill CNs 32 at a time (DecLock §6.2). */
function point(series: SeriesDef, scale: Scale, change: { clients?: number; csVerbs?: number }) {
  const clients = change.clients ?? PARAMS.clients;
  return jobOf(series, {
    spec: micro({ clients, locks: PARAMS.locks, readRatio: PARAMS.readRatio, distribution: { zipf: 0.99 }, operations: OPERATIONS[scale], criticalSectionNs: (change.csVerbs ?? PARAMS.csVerbs) * VERB_NS }),
    computeNodes: Math.max(1, Math.ceil(clients / CLIENTS_PER_CN)),
    memoryNodes: 1,
  });
}

const GOODPUT = { field: 'goodputMops', label: 'goodput (M acquires/s)', scale: 'linear' } as const;
// Mechanisms we believe for the gaps (see the claims table notes). Under the default `paper` cost
// model (docs/cost-model.md) the memory node's NIC has inbound ceilings, so retries and polls slow
// every other verb; atomics on one word also serialise (385 ns each).
const RETRY_NOTE = 'modelling gap (believed): under the paper cost model CASLock does collapse (peak near 16 clients, 15× lower at 256: docs/cost-model.md), but its retries pile on the hottest word, whose atomics serialise, and about 22 per acquire at 256 clients against the paper\'s 37.8–387.9, so the memory node\'s NIC-wide ceiling is 39 % used rather than saturated';
const DSLR_BACKOFF_NOTE = 'modelling gap (believed): where ours is above the paper, DSLR+\'s poll backoff (up to 3.2 µs plus 2 µs jitter per poll) idles each hand-over while verbs cost ~1 µs in virtual time; where below, its READ polls never saturate an uncapped MN-NIC';
const POLL_NOTE = 'modelling gap (believed): under the paper cost model both DecLock and ShiftLock keep the memory node\'s NIC near its ceiling (77–94 % at 64–256 clients) with few verbs per acquire (DecLock 1.0–1.2, ShiftLock 1.2–2.2 against the paper\'s 2.34 checks), so goodput is close; ShiftLock\'s extra CN-to-CN messages cost 1 µs each here, and its readers\' polls are fewer than the paper counts';

const clientsSweep: ExperimentDef = {
  id: 'declock-fig12-clients',
  paper: 'declock',
  figure: 'DecLock Fig. 12 (clients)',
  title: 'Goodput as clients grow (1 CN up to 32 clients, then 32 per CN)',
  params: PARAMS,
  x: { field: 'clients', label: 'clients', scale: 'linear' },
  y: GOODPUT,
  xs: { full: [16, 32, 64, 128, 192, 256], quick: [16, 64, 256], smoke: [16, 256] },
  series: SERIES,
  // DecLock Fig. 3 (same sweep, CASLock): a peak of 1.61 Mops at about 24 clients, 0.20 Mops at 256.
  paperSeries: [{ name: 'CASLock (paper, Fig. 3)', points: [{ x: 24, y: 1.61 }, { x: 256, y: 0.2 }] }],
  claims: [
    { id: 'tf-vs-dslr', text: 'DecLock-TF/DSLR+ goodput, up to', kind: 'ratio', paper: 1.74, uses: ['DecLock-TF', 'DSLR+'], ours: maxRatio('DecLock-TF', 'DSLR+'), note: DSLR_BACKOFF_NOTE },
    { id: 'pf-vs-shiftlock', text: 'DecLock-PF/ShiftLock goodput, up to', kind: 'ratio', paper: 1.4, uses: ['DecLock-PF', 'ShiftLock'], ours: maxRatio('DecLock-PF', 'ShiftLock'), note: 'run-length dependent (believed): under the paper cost model 1.13× at --quick (1.72× under ideal); ShiftLock\'s queue of waiting writers builds on the hot locks as a run goes on' },
    { id: 'cas-fastest-low', text: 'CASLock/DecLock-TF goodput at the fewest clients', kind: 'ratio', paper: 1.25, uses: ['CASLock', 'DecLock-TF'], ours: ratioAt('CASLock', 'DecLock-TF', 'first'), note: 'modelling gap (believed): the paper\'s CASLock lead at ≤ 24 clients comes from DecLock\'s CPU work in the local lock table and timestamps, which virtual time does not charge; uncontended, both cost about one atomic here' },
  ],
  job: (series, x, scale) => point(series, scale, { clients: x }),
};

const CS = { full: [0, 1, 2, 4, 8, 16, 32], quick: [0, 4, 32], smoke: [1, 16] };

const csSweep: ExperimentDef = {
  id: 'declock-fig12-cs',
  paper: 'declock',
  figure: 'DecLock Fig. 12 (CS length)',
  title: 'Goodput as the critical section grows (RDMA verbs inside it), 256 clients',
  params: PARAMS,
  x: { field: 'csVerbs', label: 'verbs in the critical section', scale: 'linear' },
  y: GOODPUT,
  xs: CS,
  series: SERIES,
  claims: [
    { id: 'vs-caslock', text: 'DecLock-TF/CASLock goodput, up to (headline 43.37×)', kind: 'ratio', paper: 43.47, uses: ['DecLock-TF', 'CASLock'], ours: maxRatio('DecLock-TF', 'CASLock'), note: RETRY_NOTE },
    { id: 'vs-dslr', text: 'DecLock-TF/DSLR+ goodput, up to', kind: 'ratio', paper: 4.35, uses: ['DecLock-TF', 'DSLR+'], ours: maxRatio('DecLock-TF', 'DSLR+'), note: DSLR_BACKOFF_NOTE },
    { id: 'vs-shiftlock', text: 'DecLock-PF/ShiftLock goodput, up to', kind: 'ratio', paper: 1.81, uses: ['DecLock-PF', 'ShiftLock'], ours: maxRatio('DecLock-PF', 'ShiftLock'), note: POLL_NOTE },
  ],
  job: (series, x, scale) => point(series, scale, { csVerbs: x }),
};

const csTail: ExperimentDef = {
  ...csSweep,
  id: 'declock-fig13-p99',
  figure: 'DecLock Fig. 13 (p99)',
  title: 'p99 acquire latency as the critical section grows, 256 clients',
  y: { field: 'p99Us', label: 'p99 acquire latency (µs)', scale: 'log' },
  claims: [
    { id: 'p99-vs-caslock', text: 'DecLock-TF p99 reduction vs CASLock, up to', kind: 'reduction', paper: 98.2, uses: ['DecLock-TF', 'CASLock'], ours: maxReduction('DecLock-TF', 'CASLock'), note: RETRY_NOTE },
    { id: 'p99-vs-dslr', text: 'DecLock-TF p99 reduction vs DSLR+, up to', kind: 'reduction', paper: 67.8, uses: ['DecLock-TF', 'DSLR+'], ours: maxReduction('DecLock-TF', 'DSLR+'), note: DSLR_BACKOFF_NOTE },
    { id: 'p99-vs-shiftlock', text: 'DecLock-PF p99 reduction vs ShiftLock, up to', kind: 'reduction', paper: 43.7, uses: ['DecLock-PF', 'ShiftLock'], ours: maxReduction('DecLock-PF', 'ShiftLock'), note: POLL_NOTE },
  ],
};

// The knee (DecLock §2.2–2.3, Fig. 3; DecLock's goodput beside it, Fig. 12): the four lock
// families from 8 to 256 clients, with one data verb in the critical section, so the table shows
// where retries and polls reach the memory node's NIC ceiling. Three figures of the same runs.
const KNEE_SERIES: readonly SeriesDef[] = [
  { name: 'CASLock', protocol: 'caslock' },
  { name: 'DSLR+', protocol: 'dslr-backoff' },
  { name: 'ShiftLock', protocol: 'shiftlock' },
  { name: 'DecLock', protocol: 'declock' },
];
const KNEE_OPERATIONS: Record<Scale, number> = { full: 8_000, quick: 4_000, smoke: 1_500 };
const KNEE_PARAMS = { ...PARAMS, csVerbs: 1, csAs: 'one data verb on the lock\'s object', seed: 1 };

const kneeGoodput: ExperimentDef = {
  id: 'declock-fig3-knee',
  paper: 'declock',
  figure: 'DecLock Fig. 3 (knee)',
  title: 'Goodput as clients grow: where retries meet the memory node NIC ceiling',
  params: KNEE_PARAMS,
  x: { field: 'clients', label: 'clients', scale: 'log' },
  y: GOODPUT,
  xs: { full: [8, 16, 32, 64, 128, 256], quick: [8, 32, 256], smoke: [16, 256] },
  series: KNEE_SERIES,
  paperSeries: [{ name: 'CASLock (paper, Fig. 3)', points: [{ x: 24, y: 1.61 }, { x: 256, y: 0.2 }] }],
  claims: [
    { id: 'caslock-collapse', text: 'CASLock peak goodput over its goodput at the most clients (1.61 → 0.20 M/s)', kind: 'ratio', paper: 1.61 / 0.2, uses: ['CASLock'], ours: peakOver('CASLock', 'last'), note: RETRY_NOTE },
    { id: 'declock-vs-caslock', text: 'DecLock/CASLock goodput at the most clients (Fig. 12, CS = 1 verb: at least)', kind: 'ratio', paper: 27.18, uses: ['DecLock', 'CASLock'], ours: ratioAt('DecLock', 'CASLock', 'last'), note: RETRY_NOTE },
    { id: 'declock-vs-dslr', text: 'DecLock/DSLR+ goodput at the most clients (Fig. 12, CS = 1 verb: at least)', kind: 'ratio', paper: 2.79, uses: ['DecLock', 'DSLR+'], ours: ratioAt('DecLock', 'DSLR+', 'last'), note: DSLR_BACKOFF_NOTE },
  ],
  job: (series, x, scale) =>
    jobOf(series, {
      spec: micro({ clients: x, locks: PARAMS.locks, readRatio: PARAMS.readRatio, distribution: { zipf: 0.99 }, operations: KNEE_OPERATIONS[scale], csVerbs: 1, seed: 1 }),
      computeNodes: Math.max(1, Math.ceil(x / CLIENTS_PER_CN)),
      memoryNodes: 1,
    }),
};

const kneeVerbs: ExperimentDef = {
  ...kneeGoodput,
  id: 'declock-fig3-verbs',
  figure: 'DecLock Fig. 3 (verbs per acquire)',
  title: 'Verbs per acquire as clients grow (1 + retries or polls)',
  y: { field: 'verbsPerAcquire', label: 'verbs per acquire', scale: 'log' },
  paperSeries: [],
  claims: [
    { id: 'caslock-vs-declock', text: 'CASLock (1 + 37.8 retries, Fig. 3) over DecLock (≤ 1.10, Fig. 13) verbs per acquire at the most clients', kind: 'ratio', paper: 38.8 / 1.1, uses: ['CASLock', 'DecLock'], ours: ratioAt('CASLock', 'DecLock', 'last'), note: RETRY_NOTE },
  ],
};

const kneeNic: ExperimentDef = {
  ...kneeGoodput,
  id: 'declock-fig3-nic',
  figure: 'DecLock Fig. 3 (MN-NIC use)',
  title: "The memory node NIC's use of its inbound ceiling as clients grow",
  y: { field: 'mnNicCeilingPct', label: 'MN-NIC ceiling used (%)', scale: 'linear' },
  paperSeries: [],
  claims: [
    { id: 'dslr-saturates', text: 'DSLR+ share of the MN-NIC ceiling at the most clients (§2.3: saturated; §1: over 95 % for retries)', kind: 'reduction', paper: 95, uses: ['DSLR+'], ours: valueAt('DSLR+', 'last') },
  ],
};

export const DECLOCK: PaperDef = {
  paper: 'declock',
  title: 'DecLock (queue-notify locking on disaggregated memory)',
  experiments: [clientsSweep, csSweep, csTail, kneeGoodput, kneeVerbs, kneeNic],
};
