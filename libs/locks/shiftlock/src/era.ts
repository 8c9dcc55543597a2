import type { DescriptorDirectory, RemoteAddr } from '@lockfabric/ports';

/**
 * Where the era counters of a memory node live: in the 64-byte descriptor slot of the recovery
 * server (client `recoveryClient` on that memory node), one 8-byte word per bucket, so clients read
 * them one-sided and only the server writes them. A lock's bucket is a hash of its slot in the
 * node's lock table (spec A10), and always lives on the lock's own memory node.
 */
export const MAX_ERA_BUCKETS = 8;

export function eraBucket(lockEntry: RemoteAddr, entryBytes: number, buckets: number): number {
  const slot = Math.floor(lockEntry.offset / entryBytes);
  return (Math.imul(slot, 0x9e3779b1) >>> 0) % buckets;
}

export function eraAddress(descriptors: DescriptorDirectory, recoveryClient: number, lockEntry: RemoteAddr, entryBytes: number, buckets: number): RemoteAddr {
  if (buckets < 1 || buckets > MAX_ERA_BUCKETS) throw new RangeError(`era buckets must be 1..${MAX_ERA_BUCKETS}, got ${buckets}`);
  const base = descriptors.of({ node: lockEntry.node, client: recoveryClient });
  return { ...base, offset: base.offset + 8 * eraBucket(lockEntry, entryBytes, buckets) };
}

