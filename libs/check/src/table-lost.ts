import type { HistoryEvent } from './history.js';

/** The error a release reports when its memory node restarted under its grant (@lockfabric/ports TableLostError, code TABLE_LOST). */
export const TABLE_LOST_ERROR = 'TableLostError';

/**
 * A hold whose release failed TABLE_LOST protected nothing once its memory node's new table could
 * be granted from. With `lostAtNs` (the restart began, when the caller knows it) its release invoke
 * moves back to that time, never before its grant; without it, back to the grant itself, the only
 * instant the history proves it held (as clipExpiredLeases does for leases). An accepted release is
 * left alone, so an overlap it caused still shows.
 */
export function clipLostTableHolds(history: readonly HistoryEvent[], lostAtNs?: number): HistoryEvent[] {
  const out = history.map((e) => ({ ...e }));
  const okAt = new Map<string, number>();
  const invokeAt = new Map<string, number>();
  out.forEach((e, i) => {
    const key = `${e.client}/${e.lock}`;
    if (e.op === 'acquire' && e.phase === 'ok') okAt.set(key, e.timeNs);
    else if (e.op === 'release' && e.phase === 'invoke') invokeAt.set(key, i);
    else if (e.op === 'release' && e.phase === 'fail' && e.error === TABLE_LOST_ERROR) {
      const at = invokeAt.get(key);
      const granted = okAt.get(key);
      if (at === undefined || granted === undefined) return;
      const end = lostAtNs === undefined ? granted : granted < lostAtNs ? lostAtNs : out[at]!.timeNs;
      out[at] = { ...out[at]!, timeNs: Math.min(out[at]!.timeNs, end) };
    }
  });
  return out;
}
