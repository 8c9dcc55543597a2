import type { NodeId } from '@lockfabric/ports';
import { FREE, isWriteLocked, ownerOf } from './lock-word.js';

/**
 * Recovery hook (run by the memory node after it fenced `deadNode`): a write lock whose owner
 * field names the dead machine becomes free; read leases run out on their own and are left alone.
 * The owner field keeps the machine id mod 256, so this assumes fewer than 256 compute nodes (a
 * larger cluster would also free the locks of node `deadNode ± 256k`).
 */
export function drtmWordAfterDeath(word: bigint, deadNode: NodeId): bigint | undefined {
  if (!isWriteLocked(word)) return undefined;
  return ownerOf(word) === deadNode % 256 ? FREE : undefined;
}
