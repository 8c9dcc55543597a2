import { checkSerializability } from '@lockfabric/check';
import type { HistoryEvent, HistoryRecorder, SerializabilityReport } from '@lockfabric/check';
import { replayTxnLog, summarizeTxns, txnWorkloadOf } from '@lockfabric/workloads';
import type { TxnLogReplay, TxnRunSpec, TxnSummary } from '@lockfabric/workloads';

/** What a transactional run's history says: the transaction log, its figures, and whether it serializes. */
export interface TxnRunCheck {
  readonly replay: TxnLogReplay;
  readonly summary: TxnSummary;
  readonly serializability: SerializabilityReport;
}

/**
 * Rebuilds the transaction log of a transactional run from its (merged) history — the same way
 * for sim, embedded and live — summarizes it over `elapsedNs`, and checks the committed
 * transactions for conflict serializability.
 */
export function checkTxnRun(history: HistoryRecorder | readonly HistoryEvent[], txn: TxnRunSpec, elapsedNs: number): TxnRunCheck {
  const workload = txnWorkloadOf(txn);
  const replay = replayTxnLog(history, workload, txn.maxAttempts);
  return { replay, summary: summarizeTxns(workload, replay, elapsedNs), serializability: checkSerializability(replay.committed) };
}
