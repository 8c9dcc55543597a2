import type { NodeId } from '@lockfabric/ports';
import type { LockIdMapDaemon } from './id-map-daemon.js';

/** What a machine's node service knows of the id map: who hosts it, and its own daemon. */
export interface IdMapEntry {
  readonly host: NodeId;
  readonly daemon: LockIdMapDaemon;
}

/**
 * The machine's node service tells its clients where the daemon is through this registry, found
 * like the agent pools' (registry.ts) through the cluster's lock-table layout object, which the
 * service and the clients of one run share; two clusters in one process never meet.
 */
const entries = new WeakMap<object, Map<NodeId, IdMapEntry>>();

export function registerIdMap(locks: object, machine: NodeId, entry: IdMapEntry): void {
  let byNode = entries.get(locks);
  if (!byNode) entries.set(locks, (byNode = new Map()));
  byNode.set(machine, entry);
}

/** The id-map entry of `machine`'s node service, if one runs (with lockIds=mapped). */
export function idMapOf(locks: object, machine: NodeId): IdMapEntry | undefined {
  return entries.get(locks)?.get(machine);
}

/** Forgets `entry` (only if it is still the machine's current one). */
export function forgetIdMap(locks: object, machine: NodeId, entry: IdMapEntry): void {
  const byNode = entries.get(locks);
  if (byNode?.get(machine) === entry) byNode.delete(machine);
}
