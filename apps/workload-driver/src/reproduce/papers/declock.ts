// DecLock (queue-notify locking on disaggregated memory), evaluation §6: 8 CNs × 32 clients, one
// MN, 100 000 locks, Zipf 0.99, 50 % reads, a critical section of 1 verb (DecLock §6.1–6.2).
import type { ExperimentDef, PaperDef, Scale, SeriesDef } from '../experiment.js';
import { jobOf, maxRatio, maxReduction, micro, ratioAt } from '../experiment.js';

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
// Mechanisms we believe for the gaps (see the claims table notes). The sim NIC serialises atomics
// on one address but, by default, has no inbound IOPS cap (libs/fabric nic-timing.ts), so retries
// and polls only cost the hot word itself, never the other clients' verbs.
const RETRY_NOTE = 'modelling gap: the sim memory-node NIC has no inbound IOPS cap by default, so CAS retries and READ polls do not saturate it and slow every other verb — the collapse DecLock §2.2/Fig. 3 measures on ConnectX-4';
const DSLR_BACKOFF_NOTE = 'modelling gap (believed): where ours is above the paper, DSLR+\'s poll backoff (up to 3.2 µs plus 2 µs jitter per poll) idles each hand-over while verbs cost ~1 µs in virtual time; where below, its READ polls never saturate an uncapped MN-NIC';
const POLL_NOTE = 'modelling gap: with no MN-NIC IOPS cap, ShiftLock readers\' polls of the entry cost the other clients nothing; DecLock\'s lead over ShiftLock in §6.2 comes from those polls and ShiftLock\'s extra CN-to-CN messages';

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
    { id: 'pf-vs-shiftlock', text: 'DecLock-PF/ShiftLock goodput, up to', kind: 'ratio', paper: 1.4, uses: ['DecLock-PF', 'ShiftLock'], ours: maxRatio('DecLock-PF', 'ShiftLock'), note: 'modelling gap (believed): the ratio moves with run length (1.10× smoke, 1.72× quick, 1.90× full) as ShiftLock\'s queue of waiting writers builds on the hot locks; with no MN-NIC IOPS cap its hand-over latency, not NIC saturation, sets its goodput' },
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
    { id: 'vs-dslr', text: 'DecLock-TF/DSLR+ goodput, up to', kind: 'ratio', paper: 4.35, uses: ['DecLock-TF', 'DSLR+'], ours: maxRatio('DecLock-TF', 'DSLR+'), note: RETRY_NOTE },
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
    { id: 'p99-vs-dslr', text: 'DecLock-TF p99 reduction vs DSLR+, up to', kind: 'reduction', paper: 67.8, uses: ['DecLock-TF', 'DSLR+'], ours: maxReduction('DecLock-TF', 'DSLR+'), note: RETRY_NOTE },
    { id: 'p99-vs-shiftlock', text: 'DecLock-PF p99 reduction vs ShiftLock, up to', kind: 'reduction', paper: 43.7, uses: ['DecLock-PF', 'ShiftLock'], ours: maxReduction('DecLock-PF', 'ShiftLock'), note: POLL_NOTE },
  ],
};

export const DECLOCK: PaperDef = {
  paper: 'declock',
  title: 'DecLock (queue-notify locking on disaggregated memory)',
  experiments: [clientsSweep, csSweep, csTail],
};
