import type { HistoryEvent, HistoryRecorder } from './history.js';
import type { LockMode } from '@lockfabric/ports';

/**
 * DSLR's ordering promise (spec I7): tickets are served in the order their FAAs reach the word, so
 * of two *conflicting* requests (not both shared) the later one is never granted while the earlier
 * one is still waiting. The library's FIFO checker also counts shared requests passing shared ones,
 * which DSLR allows (readers of one batch are granted together and poll independently).
 *
 * From a history: B overtakes A when both ask for the same lock in conflicting modes,
 * A.invoke + slack < B.invoke, and B's grant + slack < A's end (its grant, or its failure). Acquires
 * that failed with one of `excusedErrors` (a skipped ticket may be passed: I7 "unless a was
 * skipped") take no part as A.
 */
export interface ConflictFcfsViolation {
  readonly lock: number;
  readonly earlier: AcquireSpanRecord;
  readonly later: AcquireSpanRecord;
}

export interface AcquireSpanRecord {
  readonly client: string;
  readonly mode: LockMode;
  readonly invokeNs: number;
  readonly endNs: number;
  readonly granted: boolean;
  readonly error?: string;
}

export interface ConflictFcfsReport {
  readonly ok: boolean;
  readonly violations: readonly ConflictFcfsViolation[];
  readonly pairsChecked: number;
}

export function checkConflictFcfs(
  history: HistoryRecorder | readonly HistoryEvent[],
  options: { slackNs: number; excusedErrors?: readonly string[] },
): ConflictFcfsReport {
  const events = Array.isArray(history) ? (history as readonly HistoryEvent[]) : (history as HistoryRecorder).events();
  const excused = new Set(options.excusedErrors ?? []);
  const pending = new Map<string, HistoryEvent>();
  const byLock = new Map<number, AcquireSpanRecord[]>();
  for (const e of events) {
    if (e.op !== 'acquire') continue;
    const key = `${e.client}#${e.lock}`;
    if (e.phase === 'invoke') {
      pending.set(key, e);
      continue;
    }
    const invoke = pending.get(key);
    if (!invoke) continue;
    pending.delete(key);
    const record: AcquireSpanRecord = {
      client: e.client,
      mode: invoke.mode,
      invokeNs: invoke.timeNs,
      endNs: e.timeNs,
      granted: e.phase === 'ok',
      ...(e.error !== undefined ? { error: e.error } : {}),
    };
    const list = byLock.get(e.lock);
    if (list) list.push(record);
    else byLock.set(e.lock, [record]);
  }
  const violations: ConflictFcfsViolation[] = [];
  let pairsChecked = 0;
  for (const [lock, records] of byLock) {
    const sorted = [...records].sort((a, b) => a.invokeNs - b.invokeNs);
    for (let i = 0; i < sorted.length; i++) {
      const a = sorted[i]!;
      if (!a.granted && a.error !== undefined && excused.has(a.error)) continue;
      for (let j = i + 1; j < sorted.length; j++) {
        const b = sorted[j]!;
        if (b.invokeNs > a.endNs) break;
        if (a.mode === 'shared' && b.mode === 'shared') continue;
        if (!(a.invokeNs + options.slackNs < b.invokeNs)) continue;
        pairsChecked++;
        if (b.granted && b.endNs + options.slackNs < a.endNs) violations.push({ lock, earlier: a, later: b });
      }
    }
  }
  return { ok: violations.length === 0, violations, pairsChecked };
}
