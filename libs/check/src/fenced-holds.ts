import type { HistoryEvent } from './history.js';

/** The error name of a verb refused because its node was fenced (@lockfabric/ports FabricAccessError). */
export const FENCED_ERROR = 'FabricAccessError';

/**
 * A fenced hold protected nothing after the fence. When the coordinator declares a compute node
 * dead (it was paused or cut off, not crashed), memory nodes fence it — every later verb of it is
 * refused — and free its lock words for the survivors. Its clients may still believe they hold
 * their locks and release them after they resume; those releases fail fenced.
 *
 * So: a hold of `node` whose release was refused as fenced ends at the fence (like
 * clipExpiredLeases for leases). An accepted late release is left alone, so an overlap it caused
 * still shows. A grant that reached the node only after the fence (its CAS won before, the
 * recovery freed the word, the client recorded `ok` on resuming) protected nothing either: its `ok`
 * becomes a fenced failure and its refused release is dropped (clipping the release to the fence
 * would put it before the `ok`).
 */
export function clipFencedHolds(history: readonly HistoryEvent[], node: number, fencedAtNs: number, fencedError = FENCED_ERROR): HistoryEvent[] {
  const prefix = `${node}/`;
  const out: (HistoryEvent | undefined)[] = history.slice();
  const acquireOkAt = new Map<string, number>();
  const releaseInvokeAt = new Map<string, number>();
  history.forEach((e, i) => {
    if (!e.client.startsWith(prefix)) return;
    const key = `${e.client}/${e.lock}`;
    if (e.op === 'acquire') return void (e.phase === 'ok' && acquireOkAt.set(key, i));
    if (e.phase === 'invoke') return void releaseInvokeAt.set(key, i);
    const at = releaseInvokeAt.get(key);
    if (e.phase !== 'fail' || e.error !== fencedError || at === undefined) return;
    const okAt = acquireOkAt.get(key);
    if (okAt !== undefined && history[okAt]!.timeNs >= fencedAtNs) {
      out[okAt] = { ...history[okAt]!, phase: 'fail', error: fencedError };
      out[at] = undefined;
      out[i] = undefined;
    } else {
      out[at] = { ...history[at]!, timeNs: Math.min(history[at]!.timeNs, fencedAtNs) };
    }
  });
  return out.filter((e): e is HistoryEvent => e !== undefined);
}
