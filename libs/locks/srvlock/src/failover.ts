import type { LockId, NodeId } from '@lockfabric/ports';

/**
 * Failover of lock homes after a compute node is declared dead (SrvLock's server, ParLock's
 * partitions): a dead home's locks move to the next live compute node after it in the cluster's
 * order; locks of live homes stay put. Every node computes the same home from the same dead set.
 */
export interface LockHomes {
  /** The home of `lock` while every compute node lives. */
  baseHome(lock: LockId, computeNodes: readonly NodeId[]): NodeId;
  /** Whether some lock's base home is `node`. */
  isBaseHome(node: NodeId, computeNodes: readonly NodeId[]): boolean;
}

/** The first live node at or after `base` in the cluster's order (cyclic); `base` if every node is dead. */
export function nextLiveNode(base: NodeId, computeNodes: readonly NodeId[], dead: ReadonlySet<NodeId>): NodeId {
  const start = computeNodes.indexOf(base);
  if (start < 0) return base;
  for (let i = 0; i < computeNodes.length; i++) {
    const node = computeNodes[(start + i) % computeNodes.length] as NodeId;
    if (!dead.has(node)) return node;
  }
  return base;
}

/** The current home of `lock`: its base home, or the next live node after it when that is dead. */
export function currentHome(homes: LockHomes, lock: LockId, computeNodes: readonly NodeId[], dead: ReadonlySet<NodeId>): NodeId {
  return nextLiveNode(homes.baseHome(lock, computeNodes), computeNodes, dead);
}
