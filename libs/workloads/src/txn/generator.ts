import { ConfigError } from '@lockfabric/ports';
import { StreamRandom, streamSeed } from './rng.js';
import { SMALLBANK_DEFAULT_ACCOUNTS, SMALLBANK_TYPES, smallBankStream } from './smallbank.js';
import { TATP_DEFAULT_SUBSCRIBERS, TATP_MIX, TatpPopulation, nextTatpTxn } from './tatp.js';
import { TPCC_DEFAULT_WAREHOUSES, TPCC_MIX, TPCC_SCAN, TpccLayout, nextTpccTxn, tpccHome } from './tpcc.js';
import type { TpccLongReads } from './tpcc.js';
import type { TxnRunSpec, TxnTemplate, TxnWorkloadSpec } from './types.js';

/** A workload's fixed part (population, lock layout), shared by every client of a process. */
export interface TxnWorkload {
  readonly name: string;
  /** Lock ids are 0 … lockCount-1. */
  readonly lockCount: number;
  /** Transaction type names, in mix order. */
  readonly types: readonly string[];
  /** The transaction stream of one client; deterministic in (seed, client key). */
  stream(clientKey: string): TxnStream;
}

export interface TxnStream {
  next(): TxnTemplate;
}

const cache = new Map<string, TxnWorkload>();

/**
 * Builds (or reuses: a TATP population takes ~100 ms) the workload of a run spec. Trace workloads
 * are not cached (each carries its own transactions).
 */
export function txnWorkloadOf(spec: Pick<TxnRunSpec, 'workload' | 'seed'>): TxnWorkload {
  const w = spec.workload;
  if (w.kind === 'trace') return traceWorkload(w, spec.seed);
  if (w.kind === 'smallbank') {
    const accounts = w.accounts ?? SMALLBANK_DEFAULT_ACCOUNTS;
    return { name: 'smallbank', lockCount: accounts, types: [...SMALLBANK_TYPES], stream: (clientKey) => smallBankStream(accounts, spec.seed, clientKey, w.mutantSkipLock === true) };
  }
  const key = `${w.kind}:${w.kind === 'tatp' ? (w.subscribers ?? TATP_DEFAULT_SUBSCRIBERS) : `${w.warehouses ?? TPCC_DEFAULT_WAREHOUSES}:${JSON.stringify(w.longReads ?? null)}:${JSON.stringify(w.colocate ?? null)}`}:${spec.seed}`;
  let built = cache.get(key);
  if (!built) {
    built = w.kind === 'tatp' ? tatpWorkload(w.subscribers ?? TATP_DEFAULT_SUBSCRIBERS, spec.seed) : tpccWorkload(w.warehouses ?? TPCC_DEFAULT_WAREHOUSES, spec.seed, w.longReads, w.colocate);
    // A few populations at most live in one process; drop the oldest beyond that.
    if (cache.size >= 4) cache.delete(cache.keys().next().value as string);
    cache.set(key, built);
  }
  return built;
}

function tatpWorkload(subscribers: number, seed: number): TxnWorkload {
  const pop = new TatpPopulation(subscribers, seed);
  return {
    name: 'tatp',
    lockCount: pop.lockCount,
    types: TATP_MIX.map(([t]) => t),
    stream(clientKey) {
      const random = new StreamRandom(streamSeed(seed, clientKey));
      return { next: () => nextTatpTxn(pop, random) };
    },
  };
}

function tpccWorkload(warehouses: number, seed: number, longReads: TpccLongReads | undefined, colocate: readonly number[] | undefined): TxnWorkload {
  const layout = new TpccLayout(warehouses, longReads, colocate);
  return {
    name: 'tpcc',
    lockCount: layout.lockCount,
    types: [...TPCC_MIX.map(([t]) => t), ...(layout.customerTableLock(0) !== undefined ? [TPCC_SCAN] : [])],
    stream(clientKey) {
      const random = new StreamRandom(streamSeed(seed, clientKey));
      // a client key is `node/client`: with co-located placement the home warehouse is one of its node's
      const home = tpccHome(layout, random, colocate ? Number(clientKey.split('/')[0]) : undefined);
      return { next: () => nextTpccTxn(layout, home, random) };
    },
  };
}

/**
 * A trace is replayed in order by every client, each starting at its own point of the trace
 * (drawn from its stream) and wrapping around, so clients do not march in lock step.
 */
function traceWorkload(w: Extract<TxnWorkloadSpec, { kind: 'trace' }>, seed: number): TxnWorkload {
  const txns = w.transactions;
  if (txns.length === 0) throw new ConfigError(['a trace workload needs at least one transaction']);
  let maxLock = 0;
  const types = new Set<string>();
  for (const t of txns) {
    types.add(t.type);
    for (const l of t.locks) maxLock = Math.max(maxLock, l.lock);
  }
  return {
    name: w.name ?? 'trace',
    lockCount: maxLock + 1,
    types: [...types],
    stream(clientKey) {
      let cursor = new StreamRandom(streamSeed(seed, clientKey)).int(txns.length);
      return {
        next: () => {
          const t = txns[cursor]!;
          cursor = (cursor + 1) % txns.length;
          return t;
        },
      };
    },
  };
}
