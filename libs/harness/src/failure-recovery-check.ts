import type { HistoryEvent } from '@lockfabric/check';
import type { NodeId } from '@lockfabric/ports';

/** Which locks a failed node's clients held when it failed, and when survivors got each again. */
export interface FailureRecoveryReport {
  /** Locks a client of the failed node held at the failure (granted, release not completed). */
  readonly heldByDead: readonly number[];
  /** Per lock of `heldByDead`: the first survivor grant at or after the failure, ns after it. */
  readonly firstSurvivorGrantAfterNs: ReadonlyMap<number, number>;
  /**
   * Per lock of `heldByDead`: when survivors first wanted it after the failure, ns after it (0 when
   * a survivor acquire was pending at the failure), so a bound is not blamed for missing demand.
   */
  readonly firstSurvivorDemandAfterNs: ReadonlyMap<number, number>;
  /** Locks of `heldByDead` no survivor got again. */
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
  const holding = new Map<string, Map<number, number>>();
  const firstGrant = new Map<number, number>();
  const firstDemand = new Map<number, number>();
  const pendingSince = new Map<string, number>();
  const sorted = [...events].sort((a, b) => a.timeNs - b.timeNs);
  for (const e of sorted) {
    const dead = nodeOfClient(e.client) === node;
    if (dead && e.timeNs <= failedAtNs) {
      const held = holding.get(e.client) ?? new Map<number, number>();
      holding.set(e.client, held);
      if (e.op === 'acquire' && e.phase === 'ok') held.set(e.lock, (held.get(e.lock) ?? 0) + 1);
      if (e.op === 'release' && e.phase === 'ok') {
        const n = (held.get(e.lock) ?? 0) - 1;
        if (n > 0) held.set(e.lock, n);
        else held.delete(e.lock);
      }
    }
    if (!dead && e.op === 'acquire') {
      const key = `${e.client}/${e.lock}`;
      if (e.phase === 'invoke') {
        pendingSince.set(key, e.timeNs);
        if (e.timeNs >= failedAtNs && !firstDemand.has(e.lock)) firstDemand.set(e.lock, e.timeNs - failedAtNs);
      } else {
        if (pendingSince.has(key) && (pendingSince.get(key) as number) < failedAtNs && e.timeNs >= failedAtNs) firstDemand.set(e.lock, 0);
        pendingSince.delete(key);
      }
      if (e.phase === 'ok' && e.timeNs >= failedAtNs && !firstGrant.has(e.lock)) firstGrant.set(e.lock, e.timeNs - failedAtNs);
    }
  }
  const heldByDead = [...new Set([...holding.values()].flatMap((held) => [...held.keys()]))].sort((a, b) => a - b);
  for (const [key, sinceNs] of pendingSince) if (sinceNs < failedAtNs) firstDemand.set(Number(key.split('/').at(-1)), 0);
  const firstSurvivorGrantAfterNs = new Map<number, number>();
  const firstSurvivorDemandAfterNs = new Map<number, number>();
  for (const lock of heldByDead) {
    const after = firstGrant.get(lock);
    if (after !== undefined) firstSurvivorGrantAfterNs.set(lock, after);
    const demand = firstDemand.get(lock);
    if (demand !== undefined) firstSurvivorDemandAfterNs.set(lock, demand);
  }
  return { heldByDead, firstSurvivorGrantAfterNs, firstSurvivorDemandAfterNs, neverFreed: heldByDead.filter((lock) => !firstSurvivorGrantAfterNs.has(lock)) };
}
