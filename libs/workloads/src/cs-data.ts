import { lockAddress } from '@lockfabric/ports';
import type { Grant, LockTableLayout, RemoteAddr, Verbs } from '@lockfabric/ports';
import type { DataRegions } from './apps/types.js';

/**
 * Data verbs inside the critical section (bench --cs-verbs): the holder READs (shared) or WRITEs
 * (exclusive) the object its lock guards, on the lock's memory node, as the ShiftLock artifact's
 * microbenchmark and DecLock's CS-length sweep (Figs. 12–13) do. They go through the same NIC as
 * the lock verbs, so a spinning lock's retries slow them. Only their cost matters here: objects
 * share a bounded region per memory node (`CS_DATA_REGION_BYTES`), and their content is not
 * checked (the object-store workload does that).
 */
export const CS_DATA_REGION_BYTES = 1 << 20;
export const DEFAULT_CS_VERB_BYTES = 64;

export interface CsData {
  readonly verbs: number;
  readonly bytes: number;
  /** One region per memory node of the lock table (same order as `layout.memoryNodes`). */
  readonly regions: DataRegions;
}

/** Where the object of `lock` lies: on the lock's memory node, at a slot its index picks. */
export function csObjectAddress(data: CsData, layout: LockTableLayout, lock: number): RemoteAddr {
  const home = lockAddress(layout, lock).node;
  const region = data.regions.find((r) => r.node === home);
  if (!region) throw new RangeError(`no critical-section data region on memory node ${home}`);
  const slots = Math.max(1, Math.floor(CS_DATA_REGION_BYTES / data.bytes));
  const slot = Math.floor(lock / layout.memoryNodes.length) % slots;
  return { ...region, offset: slot * data.bytes };
}

/** Runs the critical section's data verbs for `grant`, one after another (each needs the last's completion). */
export async function runCsDataVerbs(data: CsData, verbs: Verbs, layout: LockTableLayout, grant: Grant): Promise<void> {
  const addr = csObjectAddress(data, layout, grant.lock);
  const payload = grant.mode === 'exclusive' ? new Uint8Array(data.bytes) : undefined;
  for (let i = 0; i < data.verbs; i++) {
    if (payload) await verbs.write(addr, payload);
    else await verbs.read(addr, data.bytes);
  }
}
