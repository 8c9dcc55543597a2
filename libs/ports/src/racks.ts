import type { LockId } from './ids.js';

/**
 * Multi-rack switch-family runs (FissLock §5.4): the lock-id space is partitioned over the racks'
 * switches and each switch decides only the locks it owns. This is the one partition function:
 * substrates route a lock's packets with it and protocols keep one sequence window per switch by
 * it, so both must agree. Round-robin (not ranges) so the hottest low ids of a Zipf workload spread
 * over every switch; the paper leaves the choice open.
 */
export function rackOfLock(lock: LockId, racks: number): number {
  return racks <= 1 ? 0 : lock % racks;
}

/** Most racks a run may have (switch ids travel in NATS subjects and the `racks` option). */
export const MAX_RACKS = 64;

/**
 * The rack of the i-th compute node (0-based among compute nodes): round-robin, so every rack has
 * machines as soon as there are as many nodes as racks. Sim and `cluster up` place nodes by it.
 */
export function rackOfComputeIndex(index: number, racks: number): number {
  return racks <= 1 ? 0 : index % racks;
}
