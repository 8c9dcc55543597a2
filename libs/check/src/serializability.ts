/**
 * Conflict-serializability checker for transactions run under locking.
 *
 * Input: the committed transactions, each with its holds [acquire ok, release invoke) per lock.
 * Two transactions conflict on a lock when both hold it and at least one holds it exclusive; the
 * one that held it first precedes the other (T1 → T2: T1 released it before T2 acquired it). The
 * committed transactions are conflict-serializable iff this precedence graph has no cycle.
 * Strict two-phase locking guarantees that; a transaction that gives a lock back before taking
 * another can close a cycle (T1 takes and frees A, T2 takes A and B, then T1 takes B).
 *
 * Holds of one lock are ordered by their start. Conflicting holds that overlap are exclusion
 * violations, which the exclusion checker reports; here they are still ordered by start, so every
 * pair of conflicting holds is ordered one way. Only the edges needed for reachability are built:
 * each hold gets an edge from the last exclusive hold before it, and an exclusive hold also from
 * every shared hold since that one. Every conflict edge of the full graph is then a path, so the
 * graph has a cycle iff the full graph has one. Cost: O(h log h) for h holds.
 */
import type { LockMode } from '@lockfabric/ports';

export interface SerialHold {
  readonly lock: number;
  readonly mode: LockMode;
  readonly acquiredNs: number;
  readonly releasedNs: number;
}

export interface SerialTxn {
  readonly id: string;
  readonly holds: readonly SerialHold[];
}

/** One step of a cycle: `from` held `lock` before `to` did, in a conflicting mode. */
export interface PrecedenceEdge {
  readonly from: string;
  readonly to: string;
  readonly lock: number;
  readonly fromMode: LockMode;
  readonly toMode: LockMode;
  /** When `from` released the lock and `to` acquired it. */
  readonly releasedNs: number;
  readonly acquiredNs: number;
}

export interface SerializabilityReport {
  readonly ok: boolean;
  readonly transactions: number;
  /** Edges of the reduced precedence graph. */
  readonly edges: number;
  /** One cycle when not ok: T1 → T2 → … → T1, each edge with the lock that orders it. */
  readonly cycle?: readonly PrecedenceEdge[];
}

interface FlatHold {
  readonly txn: number;
  readonly hold: SerialHold;
}

export function checkSerializability(transactions: readonly SerialTxn[]): SerializabilityReport {
  const byLock = new Map<number, FlatHold[]>();
  transactions.forEach((t, txn) => {
    for (const hold of t.holds) {
      let list = byLock.get(hold.lock);
      if (!list) byLock.set(hold.lock, (list = []));
      list.push({ txn, hold });
    }
  });
  const out: { to: number; from: FlatHold; toHold: FlatHold }[][] = transactions.map(() => []);
  let edges = 0;
  const addEdge = (from: FlatHold, to: FlatHold) => {
    if (from.txn === to.txn) return;
    out[from.txn]!.push({ to: to.txn, from, toHold: to });
    edges++;
  };
  for (const holds of byLock.values()) {
    holds.sort((a, b) => a.hold.acquiredNs - b.hold.acquiredNs || a.hold.releasedNs - b.hold.releasedNs);
    let lastExclusive: FlatHold | undefined;
    let sharedSince: FlatHold[] = [];
    for (const h of holds) {
      if (lastExclusive) addEdge(lastExclusive, h);
      if (h.hold.mode === 'exclusive') {
        for (const s of sharedSince) addEdge(s, h);
        lastExclusive = h;
        sharedSince = [];
      } else sharedSince.push(h);
    }
  }
  const cycle = findCycle(out);
  const base = { ok: cycle === undefined, transactions: transactions.length, edges };
  if (!cycle) return base;
  return {
    ...base,
    cycle: cycle.map((e) => ({
      from: transactions[e.from.txn]!.id,
      to: transactions[e.to]!.id,
      lock: e.from.hold.lock,
      fromMode: e.from.hold.mode,
      toMode: e.toHold.hold.mode,
      releasedNs: e.from.hold.releasedNs,
      acquiredNs: e.toHold.hold.acquiredNs,
    })),
  };
}

/** Iterative DFS (white/grey/black); returns the edges of one cycle, or undefined. */
function findCycle<E extends { to: number }>(out: readonly E[][]): E[] | undefined {
  const n = out.length;
  const color = new Uint8Array(n); // 0 white, 1 on the stack, 2 done
  const viaEdge: (E | undefined)[] = new Array(n);
  const next = new Uint32Array(n);
  for (let root = 0; root < n; root++) {
    if (color[root] !== 0) continue;
    const stack = [root];
    color[root] = 1;
    while (stack.length > 0) {
      const v = stack[stack.length - 1]!;
      const edgesOfV = out[v]!;
      if (next[v]! >= edgesOfV.length) {
        color[v] = 2;
        stack.pop();
        continue;
      }
      const e = edgesOfV[next[v]!++]!;
      if (color[e.to] === 0) {
        color[e.to] = 1;
        viaEdge[e.to] = e;
        stack.push(e.to);
      } else if (color[e.to] === 1) {
        // e closes a cycle: walk back from v along the DFS tree to e.to.
        const cycle: E[] = [e];
        let w = v;
        while (w !== e.to) {
          const via = viaEdge[w]!;
          cycle.push(via);
          w = stack[stack.indexOf(w) - 1]!;
        }
        return cycle.reverse();
      }
    }
  }
  return undefined;
}
