import { caslockWordAfterDeath } from '@lockfabric/lock-caslock';
import { drtmWordAfterDeath } from '@lockfabric/lock-drtm';
import type { Nic } from '@lockfabric/fabric';
import type { NodeId, WorkRequest } from '@lockfabric/ports';

/** What a protocol's 8-byte lock word becomes once `deadNode` is fenced; undefined leaves it. */
export type WordAfterDeath = (word: bigint, deadNode: NodeId) => bigint | undefined;

/**
 * Protocols whose dead holders the memory node clears itself, because the word names the holder's
 * machine and the design has no lease for it. The others recover by lease, by their own services
 * (ShiftLock), or by the coordinator (FissLock; MCS and ALock: gate, drain, abort, table reset; README
 * of apps/coordinator, "Recovery per protocol").
 */
export const WORD_RECOVERY: Readonly<Record<string, WordAfterDeath>> = {
  caslock: caslockWordAfterDeath,
  drtm: drtmWordAfterDeath,
};

/** Which protocol the lock table serves and for how many slots, as the last table reset said. */
export interface TableBinding {
  readonly protocol: string;
  readonly slots: number;
  readonly entryBytes: number;
}

export interface TableRecoveryResult {
  readonly protocol: string;
  readonly scanned: number;
  readonly cleared: number;
  /** False when the protocol has no word recovery (nothing was touched). */
  readonly supported: boolean;
}

/**
 * Clears the dead node's holds in region 0 through the node's own NIC (so counters show the
 * recovery verbs). READ and the CASes run in one synchronous doorbell each, with nothing in
 * between on this event loop; the CAS still guards each word against a change since the READ.
 * Call only after `deadNode` is fenced.
 */
export function recoverTable(nic: Nic, self: NodeId, rkey: number, binding: TableBinding, deadNode: NodeId): TableRecoveryResult {
  const rule = WORD_RECOVERY[binding.protocol];
  if (!rule || binding.entryBytes !== 8 || binding.slots <= 0) return { protocol: binding.protocol, scanned: 0, cleared: 0, supported: rule !== undefined };
  const addr = { node: self, region: 0, rkey, offset: 0 };
  const [read] = nic.executeBatch([{ op: 'read', addr, length: binding.slots * 8 }], self);
  if (!read || read.status !== 'ok' || !read.data) return { protocol: binding.protocol, scanned: 0, cleared: 0, supported: true };
  const view = new DataView(read.data.buffer, read.data.byteOffset, read.data.byteLength);
  const cases: WorkRequest[] = [];
  for (let slot = 0; slot < binding.slots; slot++) {
    const word = view.getBigUint64(slot * 8, true);
    const next = rule(word, deadNode);
    if (next !== undefined && next !== word) cases.push({ op: 'cas', addr: { ...addr, offset: slot * 8 }, compare: word, swap: next });
  }
  const done = cases.length === 0 ? [] : nic.executeBatch(cases, self);
  const cleared = done.filter((c, i) => c.status === 'ok' && c.value === (cases[i] as { compare: bigint }).compare).length;
  return { protocol: binding.protocol, scanned: binding.slots, cleared, supported: true };
}
