import { wordAfterDeath } from '@lockfabric/lock-catalog';
import type { Nic } from '@lockfabric/fabric';
import type { NodeId, WorkRequest } from '@lockfabric/ports';

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
 * Words one recovery doorbell reads: 64 KiB. A single READ of the whole table is refused above
 * the NIC's transfer limit (128 Ki locks), which silently left every dead hold of a large table in
 * place, and would copy the whole table (80 MB at 10 M locks) besides.
 */
export const RECOVERY_CHUNK_WORDS = 8_192;

/**
 * Clears the dead node's holds in region 0 through the node's own NIC (so counters show the
 * recovery verbs), one chunk of `chunkWords` words at a time: a READ, then one doorbell of CASes.
 * The chunks run back to back with nothing in between on this event loop; the CAS still guards
 * each word against a change since the READ. Extra memory is one chunk, whatever the table size.
 * Call only after `deadNode` is fenced.
 */
export function recoverTable(nic: Nic, self: NodeId, rkey: number, binding: TableBinding, deadNode: NodeId, chunkWords = RECOVERY_CHUNK_WORDS): TableRecoveryResult {
  // the protocols whose words name their holder's machine, with no lease (the catalog's word-recovery rules)
  const rule = wordAfterDeath(binding.protocol);
  if (!rule || binding.entryBytes !== 8 || binding.slots <= 0) return { protocol: binding.protocol, scanned: 0, cleared: 0, supported: rule !== undefined };
  let scanned = 0;
  let cleared = 0;
  for (let first = 0; first < binding.slots; first += chunkWords) {
    const words = Math.min(chunkWords, binding.slots - first);
    const [read] = nic.executeBatch([{ op: 'read', addr: { node: self, region: 0, rkey, offset: first * 8 }, length: words * 8 }], self);
    if (!read || read.status !== 'ok' || !read.data) break;
    scanned += words;
    const view = new DataView(read.data.buffer, read.data.byteOffset, read.data.byteLength);
    const cases: WorkRequest[] = [];
    for (let i = 0; i < words; i++) {
      const word = view.getBigUint64(i * 8, true);
      const next = rule(word, deadNode);
      if (next !== undefined && next !== word) cases.push({ op: 'cas', addr: { node: self, region: 0, rkey, offset: (first + i) * 8 }, compare: word, swap: next });
    }
    if (cases.length === 0) continue;
    const done = nic.executeBatch(cases, self);
    cleared += done.filter((c, i) => c.status === 'ok' && c.value === (cases[i] as { compare: bigint }).compare).length;
  }
  return { protocol: binding.protocol, scanned, cleared, supported: true };
}
