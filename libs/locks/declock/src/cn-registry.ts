import type { NodeId } from '@lockfabric/ports';

/**
 * Per-compute-node state shared by the clients of one node (the local lock table, reset counters,
 * pending grant waits). Ports are per client, so the node's clients find each other through the
 * object they all share — the lock-table layout of their substrate — plus their node id. Clients
 * that do not share a layout object simply act as separate compute nodes, which is always safe.
 */
const registries = new WeakMap<object, Map<string, Map<NodeId, unknown>>>();

function nodesOf(scope: object, key: string): Map<NodeId, unknown> {
  let byKey = registries.get(scope);
  if (!byKey) {
    byKey = new Map();
    registries.set(scope, byKey);
  }
  let nodes = byKey.get(key);
  if (!nodes) {
    nodes = new Map();
    byKey.set(key, nodes);
  }
  return nodes;
}

export function perComputeNode<T>(scope: object, key: string, node: NodeId, create: () => T): T {
  const nodes = nodesOf(scope, key);
  let state = nodes.get(node) as T | undefined;
  if (state === undefined) {
    state = create();
    nodes.set(node, state);
  }
  return state;
}

/** State shared by the whole scope (every node of this process), created on first use. */
export function perScope<T>(scope: object, key: string, create: () => T): T {
  return perComputeNode(scope, key, -1, create);
}

/** State shared by the whole scope, if someone created it. */
export function existingInScope<T>(scope: object, key: string): T | undefined {
  return nodesOf(scope, key).get(-1) as T | undefined;
}

/** Compute nodes that created state under `key` in this scope (this process's view). */
export function computeNodesIn(scope: object, key: string): number {
  return nodesOf(scope, key).size;
}

/** Every compute node's state under `key` in this scope. */
export function allComputeNodes<T>(scope: object, key: string): T[] {
  return [...nodesOf(scope, key).values()] as T[];
}

/** Every compute node's state under `key`, with its node id. */
export function computeNodeEntries<T>(scope: object, key: string): [NodeId, T][] {
  return [...nodesOf(scope, key).entries()] as [NodeId, T][];
}
