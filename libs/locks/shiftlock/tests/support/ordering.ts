import { checkFifo, collectAcquires } from '@lockfabric/check';
import type { AcquireRecord, FifoReport, HistoryEvent, HistoryRecorder } from '@lockfabric/check';

/**
 * Writers are granted in the order of their enqueue ExtCAS (spec I3). The history sees invokes, not
 * enqueues, so `slackNs` must cover the spread of invoke-to-enqueue delays (verb latency jitter and
 * queueing at the NIC).
 */
export function writerFifo(history: HistoryRecorder | readonly HistoryEvent[], slackNs: number): FifoReport {
  const events = Array.isArray(history) ? history : (history as HistoryRecorder).events();
  return checkFifo(events.filter((e: HistoryEvent) => e.mode === 'exclusive'), { slackNs, maxBypass: 0 });
}

export interface ReaderBypass {
  /** Most writers that asked clearly after a reader and were granted clearly before it. */
  readonly maxOvertakes: number;
  readonly worst?: { reader: AcquireRecord; overtakers: AcquireRecord[] };
}

/**
 * Starvation bound for readers (spec I11): a waiting reader is overtaken by at most N writers (one
 * writer phase). Counts, per granted reader, the granted writers that asked more than `slackNs`
 * after it and were granted more than `slackNs` before it.
 */
export function readerBypass(history: HistoryRecorder | readonly HistoryEvent[], slackNs: number): ReaderBypass {
  let best: ReaderBypass = { maxOvertakes: 0 };
  for (const records of collectAcquires(history).values()) {
    const writers = records.filter((r) => r.mode === 'exclusive' && r.granted);
    for (const reader of records) {
      if (reader.mode !== 'shared' || !reader.granted) continue;
      const overtakers = writers.filter((w) => w.invokeNs > reader.invokeNs + slackNs && w.endNs + slackNs < reader.endNs);
      if (overtakers.length > best.maxOvertakes) best = { maxOvertakes: overtakers.length, worst: { reader, overtakers } };
    }
  }
  return best;
}
