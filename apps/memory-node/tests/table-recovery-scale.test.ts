import { MAX_TRANSFER_BYTES } from '@lockfabric/fabric';
import type { WorkRequest } from '@lockfabric/ports';
import { holderTag } from '@lockfabric/lock-catalog';
import { describe, expect, it } from 'vitest';
import { MemoryNodeExecutor } from '../src/memory-executor.js';
import { RECOVERY_CHUNK_WORDS, recoverTable } from '../src/table-recovery.js';

const clock = { nowNs: () => 0, sleep: async () => undefined } as never;
// More words than one READ may carry (MAX_TRANSFER_BYTES / 8 = 131 072), and not a whole number of chunks.
const SLOTS = 300_001;

/** A large caslock table with holds of dead node 2 at both ends and the middle, and one live hold. */
function largeTable() {
  const ex = new MemoryNodeExecutor({ node: 0, lockCount: SLOTS, entryBytes: 8, lockTableBytes: SLOTS * 8 }, clock);
  const rkey = ex.memory.regions().find((r) => r.region === 0)!.rkey;
  const cas = (slot: number, swap: bigint): WorkRequest => ({ op: 'cas', addr: { node: 0, region: 0, rkey, offset: slot * 8 }, compare: 0n, swap });
  const dead = holderTag({ node: 2, client: 1 });
  const live = holderTag({ node: 1, client: 1 });
  ex.nic.executeBatch([cas(0, dead), cas(150_000, dead), cas(SLOTS - 1, dead), cas(200_000, live)], 9);
  // Counts the bytes every READ of the recovery asks for: the memory a recovery holds at once.
  const reads: number[] = [];
  const nic = {
    executeBatch: (batch: readonly WorkRequest[], initiator: number) => {
      for (const wr of batch) if (wr.op === 'read') reads.push(wr.length);
      return ex.nic.executeBatch(batch, initiator);
    },
  } as typeof ex.nic;
  const word = (slot: number) => {
    const [c] = ex.nic.executeBatch([{ op: 'read', addr: { node: 0, region: 0, rkey, offset: slot * 8 }, length: 8 }], 0);
    return new DataView(c!.data!.buffer, c!.data!.byteOffset).getBigUint64(0, true);
  };
  return { ex, rkey, nic, reads, word, live };
}

describe('dead-hold recovery on a table larger than one READ', () => {
  it('scans every word in bounded chunks and clears every dead hold', () => {
    const t = largeTable();
    const result = recoverTable(t.nic, 0, t.rkey, { protocol: 'caslock', slots: SLOTS, entryBytes: 8 }, 2);
    expect(result).toStrictEqual({ protocol: 'caslock', scanned: SLOTS, cleared: 3, supported: true });
    expect([0, 150_000, SLOTS - 1, 200_000].map(t.word)).toStrictEqual([0n, 0n, 0n, t.live]);
    // Sizes, not times: no READ holds more than one chunk, and the chunks cover the table once.
    expect(Math.max(...t.reads)).toBe(RECOVERY_CHUNK_WORDS * 8);
    expect(t.reads.reduce((a, b) => a + b, 0)).toBe(SLOTS * 8);
  });

  it('catches the mutant that reads the whole table in one READ (the old recovery)', () => {
    const t = largeTable();
    expect(SLOTS * 8).toBeGreaterThan(MAX_TRANSFER_BYTES);
    const mutant = recoverTable(t.nic, 0, t.rkey, { protocol: 'caslock', slots: SLOTS, entryBytes: 8 }, 2, SLOTS);
    // The NIC refuses the oversized READ: nothing scanned, the dead holds stay — what the test above rules out.
    expect(mutant).toMatchObject({ scanned: 0, cleared: 0 });
    expect(t.word(0)).not.toBe(0n);
  });
});
