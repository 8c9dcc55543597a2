// ALock (asymmetric local/remote cohort lock). The report has no measurements (ALock §6.1); its
// claim is that local processes take the lock without verbs, so its advantage over an all-remote
// lock grows with the share of local operations. The sweep places that share of the clients on
// the memory node itself (co-located with the lock table).
import type { ExperimentDef, Lookup, PaperDef, Scale, SeriesDef } from '../experiment.js';
import { jobOf, micro } from '../experiment.js';

const CLIENTS = 16;
const LOCKS = 64;
const OPERATIONS: Record<Scale, number> = { full: 40_000, quick: 8_000, smoke: 2_500 };

const ALOCK: SeriesDef = { name: 'ALock', protocol: 'alock' };
/** All-remote baselines: local processes go through the NIC by loopback. */
const MCS: SeriesDef = { name: 'MCS', protocol: 'mcs' };
const CASLOCK: SeriesDef = { name: 'CASLock', protocol: 'caslock' };

const PARAMS = { clients: CLIENTS, locks: LOCKS, distribution: 'uniform', readRatio: 0, computeNodes: 2, memoryNodes: 1 };
const XS = { full: [0, 0.25, 0.5, 0.75, 1], quick: [0, 0.5, 1], smoke: [0, 1] };

const job = (series: SeriesDef, x: number, scale: Scale) =>
  jobOf(series, { spec: micro({ clients: CLIENTS, locks: LOCKS, readRatio: 0, distribution: 'uniform', operations: OPERATIONS[scale] }), computeNodes: 2, memoryNodes: 1, colocatedClients: Math.round(x * CLIENTS) });

/** How much ALock's lead over MCS grows from the lowest to the highest local share. */
const leadGrowth = (y: Lookup, xs: readonly number[]) => {
  const lead = (x: number) => y('ALock', x) / y('MCS', x);
  return lead(xs[xs.length - 1]!) / lead(xs[0]!);
};

const goodput: ExperimentDef = {
  id: 'alock-local-fraction',
  paper: 'alock',
  figure: 'ALock §6.1 (no figure; claim as a curve)',
  title: 'Goodput as the share of clients local to the lock table grows',
  params: PARAMS,
  x: { field: 'localFraction', label: 'share of clients on the memory node', scale: 'linear' },
  y: { field: 'goodputMops', label: 'goodput (M acquires/s)', scale: 'linear' },
  xs: XS,
  series: [ALOCK, MCS, CASLOCK],
  claims: [
    {
      id: 'lead-grows',
      text: 'ALock/MCS lead, all local over none local (SPAA\'24 sanity figure: up to 29×)',
      kind: 'ratio',
      paper: 29,
      uses: ['ALock', 'MCS'],
      ours: leadGrowth,
      note: 'no paper number: 29× is the later SPAA\'24 lock table\'s figure against other systems, kept only as a sanity expectation; the sim charges local CPU atomics and polls too little to reach a loopback-congested NIC',
    },
  ],
  job,
};

const verbs: ExperimentDef = {
  ...goodput,
  id: 'alock-local-verbs',
  figure: 'ALock §3 (verbs per acquire)',
  title: 'Verbs per acquire-release as the local share grows',
  y: { field: 'verbsPerOp', label: 'verbs per acquire + release', scale: 'linear' },
  claims: [
    {
      id: 'local-no-verbs',
      text: 'ALock verbs saved, all local vs none local (local ops cost no verbs)',
      kind: 'reduction',
      paper: 100,
      uses: ['ALock'],
      ours: (y, xs) => 100 * (1 - y('ALock', xs[xs.length - 1]!) / y('ALock', xs[0]!)),
    },
  ],
};

export const ALOCK_PAPER: PaperDef = {
  paper: 'alock',
  title: 'ALock (asymmetric lock for local and remote processes)',
  experiments: [goodput, verbs],
};
