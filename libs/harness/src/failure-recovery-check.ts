import type { HistoryEvent } from '@lockfabric/check';
import type { NodeId } from '@lockfabric/ports';

/** Which locks a failed node's clients held when it failed, and when survivors got each again. */
export interface FailureRecoveryReport {
  /** Locks a client of the failed node held at the failure (granted, release not completed). */
  readonly heldByDead: readonly number[];
  /**
   * Per lock of `heldByDead`: the first survivor grant at or after the failure that conflicts with
   * the dead holds, ns after it (any grant when the dead node held it exclusive; an exclusive one
   * when it held it only shared, since readers may share it with a dead reader).
   */
  readonly firstSurvivorGrantAfterNs: ReadonlyMap<number, number>;
  /**
   * Per lock of `heldByDead`: when survivors first wanted it after the failure, ns after it (0 when
   * a survivor acquire was pending at the failure), so a bound is not blamed for missing demand.
   */
  readonly firstSurvivorDemandAfterNs: ReadonlyMap<number, number>;
  /** Locks of `heldByDead` no survivor got again in a conflicting mode. */
  readonly neverFreed: readonly number[];
}

function nodeOfClient(client: string): NodeId {
  return Number(client.split('/')[0]);
}

/**
 * Reads a history for the recovery of a failed node's locks: what its clients held at
 * `failedAtNs` and how long survivors waited for each. Decides nothing; tests set the bound.
 */
export function failureRecoveryReport(events: Iterable<HistoryEvent>, node: NodeId, failedAtNs: number): FailureRecoveryReport {
  /** Per dead client and lock: holds not yet released, and how many of them are exclusive. */
  const holding = new Map<string, Map<number, { count: number; exclusive: number }>>();
  /** Per lock: first survivor grant after the failure, of any mode and of exclusive mode; the same for demand. */
  const firstGrant = { any: new Map<number, number>(), exclusive: new Map<number, number>() };
  const firstDemand = { any: new Map<number, number>(), exclusive: new Map<number, number>() };
  const note = (maps: { any: Map<number, number>; exclusive: Map<number, number> }, lock: number, exclusive: boolean, value: number, overwrite = false) => {
    for (const map of exclusive ? [maps.any, maps.exclusive] : [maps.any]) if (overwrite || !map.has(lock)) map.set(lock, value);
  };
  const pendingSince = new Map<string, number>();
  const sorted = [...events].sort((a, b) => a.timeNs - b.timeNs);
  for (const e of sorted) {
    const dead = nodeOfClient(e.client) === node;
    if (dead && e.timeNs <= failedAtNs) {
      const held = holding.get(e.client) ?? new Map<number, { count: number; exclusive: number }>();
      holding.set(e.client, held);
      const h = held.get(e.lock) ?? { count: 0, exclusive: 0 };
      const x = e.mode === 'exclusive' ? 1 : 0;
      if (e.op === 'acquire' && e.phase === 'ok') held.set(e.lock, { count: h.count + 1, exclusive: h.exclusive + x });
      if (e.op === 'release' && e.phase === 'ok') {
        if (h.count > 1) held.set(e.lock, { count: h.count - 1, exclusive: Math.max(0, h.exclusive - x) });
        else held.delete(e.lock);
      }
    }
    if (!dead && e.op === 'acquire') {
      const key = `${e.client}/${e.lock}/${e.mode}`;
      const exclusive = e.mode === 'exclusive';
      if (e.phase === 'invoke') {
        pendingSince.set(key, e.timeNs);
        if (e.timeNs >= failedAtNs) note(firstDemand, e.lock, exclusive, e.timeNs - failedAtNs);
      } else {
        if (pendingSince.has(key) && (pendingSince.get(key) as number) < failedAtNs && e.timeNs >= failedAtNs) note(firstDemand, e.lock, exclusive, 0, true);
        pendingSince.delete(key);
      }
      if (e.phase === 'ok' && e.timeNs >= failedAtNs) note(firstGrant, e.lock, exclusive, e.timeNs - failedAtNs);
    }
  }
  const heldByDead = [...new Set([...holding.values()].flatMap((held) => [...held.keys()]))].sort((a, b) => a - b);
  const heldExclusive = new Set([...holding.values()].flatMap((held) => [...held].filter(([, h]) => h.exclusive > 0).map(([lock]) => lock)));
  for (const [key, sinceNs] of pendingSince) {
    const [, , lock, mode] = key.split('/');
    if (sinceNs < failedAtNs) note(firstDemand, Number(lock), mode === 'exclusive', 0, true);
  }
  const firstSurvivorGrantAfterNs = new Map<number, number>();
  const firstSurvivorDemandAfterNs = new Map<number, number>();
  for (const lock of heldByDead) {
    const conflicting = heldExclusive.has(lock) ? 'any' : 'exclusive';
    const after = firstGrant[conflicting].get(lock);
    if (after !== undefined) firstSurvivorGrantAfterNs.set(lock, after);
    const demand = firstDemand[conflicting].get(lock);
    if (demand !== undefined) firstSurvivorDemandAfterNs.set(lock, demand);
  }
  return { heldByDead, firstSurvivorGrantAfterNs, firstSurvivorDemandAfterNs, neverFreed: heldByDead.filter((lock) => !firstSurvivorGrantAfterNs.has(lock)) };
}
