import type { NodeId } from '@lockfabric/ports';
import { existingInScope, perScope } from './cn-registry.js';

/**
 * What this process knows of a run's compute nodes: which take part (each runs the declock node
 * service, which acknowledges resets) and which the coordinator declared dead (FailureNotice).
 * Lock resets use it to stop waiting for a dead node's queue members (§3.6) and to take over a
 * reset whose resetter died. Without a node service nobody builds a view, and resets fall back
 * to waiting for the queue to drain (or to `suspectAfterNs`).
 */
export class ClusterView {
  readonly computeNodes = new Set<NodeId>();
  readonly dead = new Set<NodeId>();

  isDead(node: NodeId): boolean {
    return this.dead.has(node);
  }

  markDead(node: NodeId): void {
    this.dead.add(node);
  }

  /** Compute nodes not declared dead: those a reset waits for. */
  live(): NodeId[] {
    return [...this.computeNodes].filter((node) => !this.dead.has(node));
  }
}

function viewKey(protocol: string): string {
  return `${protocol}/cluster-view`;
}

/** The view of `protocol`'s run in this scope (the run's lock-table layout), created if missing. */
export function joinClusterView(scope: object, protocol: string): ClusterView {
  return perScope(scope, viewKey(protocol), () => new ClusterView());
}

/** The view, if a node service of this run built one. */
export function clusterViewOf(scope: object, protocol: string): ClusterView | undefined {
  return existingInScope<ClusterView>(scope, viewKey(protocol));
}
