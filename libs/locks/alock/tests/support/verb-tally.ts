import type { InMemoryCluster } from '@lockfabric/sim';

/** Verb counts by target node and opcode, zero counts left out: `{ '0': { cas: 1 } }`. */
export type VerbTable = Record<string, Record<string, number>>;

/** Verbs served so far, issued by clients on node `initiator` (or by anyone). */
export function verbTable(cluster: InMemoryCluster, initiator?: number): VerbTable {
  const out: VerbTable = {};
  for (const [node, snapshot] of Object.entries(cluster.nicCounters())) {
    const counts = initiator === undefined ? snapshot.byOpcode : snapshot.byInitiator[String(initiator)]?.byOpcode ?? {};
    const ops = Object.entries(counts as Record<string, number>).filter(([, n]) => n > 0);
    if (ops.length > 0) out[node] = Object.fromEntries(ops);
  }
  return out;
}

/** `after - before`, zero counts left out. */
export function verbDelta(before: VerbTable, after: VerbTable): VerbTable {
  const out: VerbTable = {};
  for (const [node, ops] of Object.entries(after)) {
    const delta = Object.entries(ops)
      .map(([op, n]) => [op, n - (before[node]?.[op] ?? 0)] as const)
      .filter(([, n]) => n !== 0);
    if (delta.length > 0) out[node] = Object.fromEntries(delta);
  }
  return out;
}

/** Total verbs in a table. */
export function verbCount(table: VerbTable): number {
  return Object.values(table).reduce((sum, ops) => sum + Object.values(ops).reduce((a, b) => a + b, 0), 0);
}
