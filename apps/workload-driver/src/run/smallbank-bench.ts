import { HistoryRecorder, checkHistory, historyDigest } from '@lockfabric/check';
import type { HistoryEvent } from '@lockfabric/check';
import { replayTxnLog, RunStats, SMALLBANK_DEFAULT_ACCOUNTS, SMALLBANK_INITIAL_BALANCE, VerbAccounting, opsBudgetFor, runTxnLoop, stopAfter, summarize, txnWorkloadOf } from '@lockfabric/workloads';
import type { SmallBankWorkloadSpec, TxnRunSpec, WorkloadSpec } from '@lockfabric/workloads';
import { RealClock } from '@lockfabric/realtime';
import { SeededRandom } from '@lockfabric/random';
import { RedLockClient, SmallBankStore, checkSmallBank, expectedDeltas } from '@lockfabric/smallbank';
import type { SmallBankCheck } from '@lockfabric/smallbank';
import { startRedisForCommand } from '../cluster/redis-process.js';

/** The Redis a SmallBank bench uses: --redis, else the cluster's, else one started for this command. */
export async function smallBankRedis(workload: SmallBankWorkloadSpec, clusterRedisUrl: string | undefined, note: (line: string) => void): Promise<{ url: string; stop(): Promise<void> }> {
  if (workload.redisUrl) return { url: workload.redisUrl, stop: async () => undefined };
  if (clusterRedisUrl) return (note(`using the cluster's redis-server at ${clusterRedisUrl}`), { url: clusterRedisUrl, stop: async () => undefined });
  const own = await startRedisForCommand();
  note(`started a redis-server for this run at ${own.url}`);
  return own;
}

/** The spec with the Redis URL its compute nodes connect to. */
export function withRedis(spec: WorkloadSpec, url: string): WorkloadSpec {
  const txn = spec.transactions!;
  return { ...spec, transactions: { ...txn, workload: { ...(txn.workload as SmallBankWorkloadSpec), redisUrl: url } } };
}

/** Fills Redis with the run's accounts (each at SMALLBANK_INITIAL_BALANCE). */
export async function populateAccounts(url: string, accounts: number): Promise<void> {
  const store = await SmallBankStore.open(url);
  try {
    await store.populate(accounts, SMALLBANK_INITIAL_BALANCE);
  } finally {
    await store.close();
  }
}

/** After the run: reads every balance and checks them against the committed transaction log. */
export async function checkBalances(url: string, txn: TxnRunSpec, history: readonly HistoryEvent[] | HistoryRecorder): Promise<SmallBankCheck> {
  const workload = txn.workload as SmallBankWorkloadSpec;
  const accounts = workload.accounts ?? SMALLBANK_DEFAULT_ACCOUNTS;
  const replay = replayTxnLog(history, txnWorkloadOf(txn), txn.maxAttempts);
  const { deltas, transfers } = expectedDeltas(workload, accounts, txn.seed, replay.committed);
  const store = await SmallBankStore.open(url);
  try {
    return checkSmallBank(await store.balances(accounts), SMALLBANK_INITIAL_BALANCE, deltas, transfers);
  } finally {
    await store.close();
  }
}

export interface RedLockRunResult {
  readonly summary: ReturnType<typeof summarize>;
  readonly history: readonly HistoryEvent[];
  readonly verdict: ReturnType<typeof checkHistory>;
  readonly digest: string;
  readonly accounting: VerbAccounting;
  readonly wallMs: number;
}

/**
 * SmallBank with RedLock: `spec.clients` clients in this process, each with its own Redis
 * connection, run the same transaction loop (strict 2PL, same streams) as LockFabric's compute
 * nodes, locking accounts with the `redlock` library instead of a fabric protocol.
 */
export async function runRedLock(spec: WorkloadSpec, url: string, onProgress?: (fraction: number) => void): Promise<RedLockRunResult> {
  const txn = spec.transactions!;
  const workload = txnWorkloadOf(txn);
  const clock = new RealClock();
  const recorder = new HistoryRecorder();
  const stats = new RunStats();
  const stores = await Promise.all(Array.from({ length: spec.clients }, () => SmallBankStore.open(url)));
  const wallStart = performance.now();
  const startNs = clock.nowNs();
  const shouldStop = stopAfter(clock, spec.durationMs);
  const progress = setInterval(() => onProgress?.(spec.operations ? stats.acquires / (spec.operations * 1.85) : 0), 250);
  try {
    await Promise.all(
      stores.map((store, client) =>
        runTxnLoop({
          client: new RedLockClient(store.redis),
          ports: { self: { node: 0, client }, clock, random: new SeededRandom(spec.seed * 1_000 + client) },
          spec,
          txn,
          workload,
          recorder,
          stats,
          shouldStop,
          txnBudget: opsBudgetFor(spec, client),
          data: store,
        }),
      ),
    );
  } finally {
    clearInterval(progress);
    await Promise.all(stores.map((s) => s.close()));
  }
  const elapsedNs = clock.nowNs() - startNs;
  return { summary: summarize(stats, elapsedNs), history: [...recorder.events()], verdict: checkHistory(recorder), digest: historyDigest(recorder), accounting: new VerbAccounting(), wallMs: performance.now() - wallStart };
}
