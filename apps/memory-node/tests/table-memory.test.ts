import { Nic, NicCounters } from '@lockfabric/fabric';
import type { WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { MemoryNodeExecutor } from '../src/memory-executor.js';

const clock = { nowNs: () => 0, sleep: async () => undefined } as never;
const LOCKS = 10_000_000;
const WORD_BYTES = LOCKS * 8;

/** CASes `count` distinct lock words (spread over the table), each naming its lock as clients do. */
function touch(nic: Nic, rkey: number, count: number): void {
  const stride = Math.floor(LOCKS / count);
  for (let first = 0; first < count; first += 1_000) {
    const batch: WorkRequest[] = [];
    for (let i = first; i < first + 1_000; i++) batch.push({ op: 'cas', lock: i * stride, addr: { node: 0, region: 0, rkey, offset: i * stride * 8 }, compare: 0n, swap: 1n });
    nic.executeBatch(batch, 1);
  }
}

describe('the memory node at 10 M locks', () => {
  it('allocates the lock words as they are stored to (never the untouched descriptor region) and keeps no state per lock touched', () => {
    const before = process.memoryUsage().arrayBuffers;
    const ex = new MemoryNodeExecutor({ node: 0, lockCount: LOCKS, entryBytes: 8, lockTableBytes: WORD_BYTES, dataBytes: 0 }, clock);
    const regions = ex.memory.regions();
    expect(regions.find((r) => r.region === 0)?.sizeBytes).toBe(WORD_BYTES);
    // Sizes, not times: the buffers the node holds are the words and the fixed descriptor region.
    const fixed = regions.filter((r) => r.region !== 0).reduce((sum, r) => sum + r.sizeBytes, 0);
    expect(fixed).toBeLessThan(8 << 20);
    // Pages are allocated on first store: nothing yet; the touches below (800 B apart) reach every page.
    expect(ex.memory.allocatedBytes()).toBe(0);
    touch(ex.nic, regions[0]!.rkey, 100_000);
    const held = process.memoryUsage().arrayBuffers - before;
    expect(held).toBeGreaterThanOrEqual(WORD_BYTES - (1 << 20));
    expect(held).toBeLessThanOrEqual(WORD_BYTES + fixed + (1 << 20));
    expect(ex.memory.allocatedBytes()).toBe(WORD_BYTES);
    // The NIC's figures are per opcode and initiator, never one entry per lock ever touched.
    expect(Object.keys(ex.nic.counters.snapshot().byLock)).toHaveLength(0);
    expect(ex.nic.counters.snapshot().verbs).toBe(100_000);
  });

  it('catches the mutant NIC that counts per lock: one map entry for every lock it served', () => {
    const ex = new MemoryNodeExecutor({ node: 0, lockCount: LOCKS, entryBytes: 8, lockTableBytes: WORD_BYTES, dataBytes: 0 }, clock);
    const mutant = new Nic(ex.memory, { counters: new NicCounters(0, { perLock: true }) });
    touch(mutant, ex.memory.regions()[0]!.rkey, 100_000);
    expect(Object.keys(mutant.counters.snapshot().byLock)).toHaveLength(100_000);
  });
});
