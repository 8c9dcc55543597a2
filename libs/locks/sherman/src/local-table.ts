import type { WordReconciler } from '@lockfabric/locks-common';
import type { LockId, NodeId } from '@lockfabric/ports';

/** A client waiting on its compute node for the local lock; `wake` is called once it is handed. */
export interface LocalWaiter {
  handed: boolean;
  wake(): void;
}

/**
 * One lock as one compute node sees it (Sherman's local lock table entry). `held`: a client of
 * this node owns the local lock (holding, or about to CAS the global word). `remoteHeld`: this node
 * holds the global word, so the local owner needs no verb. `handovers`: local handovers since the
 * node took the global word, bounded so other nodes get a turn.
 */
export interface LocalLock {
  held: boolean;
  remoteHeld: boolean;
  handovers: number;
  readonly waiters: LocalWaiter[];
  /** Reads the global word back after a verb of this node on it failed uncertain (created then). */
  readBack?: WordReconciler;
}

/** The local lock tables of one run (`locks`: the run's layout object), per compute node. */
const tables = new WeakMap<object, Map<NodeId, Map<LockId, LocalLock>>>();

/** The local entry of `lock` on `node` in the run of `locks`, created on first use. */
export function localLock(locks: object, node: NodeId, lock: LockId): LocalLock {
  let byNode = tables.get(locks);
  if (!byNode) tables.set(locks, (byNode = new Map()));
  let table = byNode.get(node);
  if (!table) byNode.set(node, (table = new Map()));
  let entry = table.get(lock);
  if (!entry) table.set(lock, (entry = { held: false, remoteHeld: false, handovers: 0, waiters: [] }));
  return entry;
}
