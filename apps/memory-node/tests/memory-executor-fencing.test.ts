import { FabricAccessError, lockAddress } from '@lockfabric/ports';
import type { WorkRequest } from '@lockfabric/ports';
import { holderTag, writeLockedWord } from '@lockfabric/lock-catalog';
import { describe, expect, it } from 'vitest';
import { MemoryNodeExecutor } from '../src/memory-executor.js';
import { recoverTable } from '../src/table-recovery.js';

const clock = { nowNs: () => 0, sleep: async () => undefined } as never;

function executor(): MemoryNodeExecutor {
  return new MemoryNodeExecutor({ node: 0, lockCount: 8, entryBytes: 8, lockTableBytes: 64 }, clock);
}

function wordAt(ex: MemoryNodeExecutor, slot: number): bigint {
  const region = ex.memory.regions().find((r) => r.region === 0)!;
  const [c] = ex.nic.executeBatch([{ op: 'read', addr: { node: 0, region: 0, rkey: region.rkey, offset: slot * 8 }, length: 8 }], 0);
  return new DataView(c!.data!.buffer, c!.data!.byteOffset).getBigUint64(0, true);
}

function cas(ex: MemoryNodeExecutor, slot: number, compare: bigint, swap: bigint): WorkRequest {
  const region = ex.memory.regions().find((r) => r.region === 0)!;
  const addr = lockAddress({ memoryNodes: [{ node: 0, region: 0, rkey: region.rkey, baseOffset: 0 }], entryBytes: 8, lockCount: 8 }, slot);
  return { op: 'cas', addr, compare, swap };
}

describe('memory node fencing', () => {
  it('refuses every verb of a fenced compute node with a typed status, and serves the others', async () => {
    const ex = executor();
    const tag = holderTag({ node: 2, client: 0 });
    expect((await ex.executeBatch([cas(ex, 1, 0n, tag)], 2))[0]).toMatchObject({ status: 'ok', value: 0n });
    ex.fences.applyFailure('compute', 2, 1n, 4n);
    const refused = await ex.executeBatch([cas(ex, 1, tag, 0n), cas(ex, 2, 0n, tag)], 2);
    expect(refused.map((c) => c.status)).toStrictEqual(['bad-rkey', 'bad-rkey']);
    expect(refused[0]?.detail).toMatch(/^fenced: compute node 2/);
    // What a client's convenience method would throw: a FabricAccessError naming the fence.
    expect(new FabricAccessError(refused[0]!.status, refused[0]!.detail!).code).toBe('FABRIC_ACCESS');
    // The late release did nothing: the word still names the dead holder.
    expect(wordAt(ex, 1)).toBe(tag);
    expect(wordAt(ex, 2)).toBe(0n);
    expect(ex.fencedCount).toBe(2);
    expect((await ex.executeBatch([cas(ex, 3, 0n, 7n)], 1))[0]?.status).toBe('ok');
    // A new incarnation is admitted again.
    ex.fences.applyView(5n, [{ role: 'compute', node: 2, incarnation: 2n, state: 'alive' }]);
    expect((await ex.executeBatch([cas(ex, 2, 0n, tag)], 2))[0]?.status).toBe('ok');
  });

  it('clears caslock words held by the dead node only', () => {
    const ex = executor();
    const region = ex.memory.regions().find((r) => r.region === 0)!;
    const dead = holderTag({ node: 2, client: 3 });
    const live = holderTag({ node: 1, client: 3 });
    ex.nic.executeBatch([cas(ex, 0, 0n, dead), cas(ex, 4, 0n, live), cas(ex, 7, 0n, dead)], 9);
    const result = recoverTable(ex.nic, 0, region.rkey, { protocol: 'caslock', slots: 8, entryBytes: 8 }, 2);
    expect(result).toStrictEqual({ protocol: 'caslock', scanned: 8, cleared: 2, supported: true });
    expect([0, 4, 7].map((s) => wordAt(ex, s))).toStrictEqual([0n, live, 0n]);
  });

  it('clears drtm write locks of the dead machine; leaves unsupported protocols untouched', () => {
    const ex = executor();
    const region = ex.memory.regions().find((r) => r.region === 0)!;
    ex.nic.executeBatch([cas(ex, 0, 0n, writeLockedWord(2)), cas(ex, 1, 0n, writeLockedWord(1))], 9);
    expect(recoverTable(ex.nic, 0, region.rkey, { protocol: 'mcs', slots: 8, entryBytes: 8 }, 2)).toMatchObject({ supported: false, cleared: 0 });
    expect(wordAt(ex, 0)).toBe(writeLockedWord(2));
    expect(recoverTable(ex.nic, 0, region.rkey, { protocol: 'drtm', slots: 8, entryBytes: 8 }, 2)).toMatchObject({ cleared: 1 });
    expect([wordAt(ex, 0), wordAt(ex, 1)]).toStrictEqual([0n, writeLockedWord(1)]);
  });
});
