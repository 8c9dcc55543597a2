import { FabricAccessError } from '@lockfabric/ports';
import type { PostOptions, RemoteAddr, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { createLocalMemory } from './local-memory.js';
import { Nic } from './nic.js';
import { NodeMemory } from './node-memory.js';
import { QueuePairVerbs } from './queue-pair-verbs.js';
import { fieldBoundary, u64ToBytes } from './u64.js';

/** Two nodes: 0 is a memory node, 1 a compute node with its own small region. */
function cluster() {
  const nics = new Map([0, 1].map((node) => [node, new Nic(new NodeMemory(node))]));
  const nic = (node: number) => nics.get(node) as Nic;
  const table = nic(0).memory.register(64);
  const desc = nic(1).memory.register(16);
  const posted: { batch: readonly WorkRequest[]; options: PostOptions }[] = [];
  const post = async (batch: readonly WorkRequest[], options: PostOptions) => {
    posted.push({ batch, options });
    await Promise.resolve(); // completions arrive asynchronously, like a real completion queue
    const node = batch[0]?.addr.node ?? 0;
    const target = nics.get(node);
    return target ? target.executeBatch(batch, 1) : batch.map(() => ({ status: 'unreachable' as const, detail: `no node ${node}` }));
  };
  const verbs = new QueuePairVerbs({ post, localNode: 1, local: createLocalMemory(nic(1).memory, async () => {}) });
  const lockWord: RemoteAddr = { node: 0, region: table.region, rkey: table.rkey, offset: 0 };
  const descWord: RemoteAddr = { node: 1, region: desc.region, rkey: desc.rkey, offset: 8 };
  return { nic, verbs, post, posted, lockWord, descWord };
}

describe('QueuePairVerbs', () => {
  it('convenience verbs post one request each and return values', async () => {
    const { verbs, lockWord } = cluster();
    await verbs.write(lockWord, u64ToBytes(3n));
    expect([...(await verbs.read(lockWord, 8))]).toEqual([3, 0, 0, 0, 0, 0, 0, 0]);
    expect(await verbs.cas(lockWord, 3n, 4n)).toBe(3n);
    expect(await verbs.faa(lockWord, 1n)).toBe(4n);
    expect(await verbs.maskedCas(lockWord, 8, 0n, 0xf0n, 0n, 0xf0n)).toBe(5n);
    expect(await verbs.maskedFaa({ ...lockWord, offset: 16 }, 16, 1n << 64n, fieldBoundary(64, 64))).toBe(0n);
    expect(await verbs.faa(lockWord, 0n)).toBe(0xf5n);
  });

  it('passes the lock and the trace context through', async () => {
    const { verbs, posted, lockWord, nic } = cluster();
    const trace = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 };
    await verbs.cas(lockWord, 0n, 1n, { lock: 12, trace });
    await verbs.faa(lockWord, 1n);
    expect(posted[0]?.batch[0]).toMatchObject({ op: 'cas', lock: 12 });
    expect(posted[0]?.options).toEqual({ trace });
    expect(posted[1]?.batch[0]).not.toHaveProperty('lock');
    expect(nic(0).counters.snapshot().byLock).toEqual({ '12': 1 });
  });

  it('throws FabricAccessError carrying the status and detail of a failed completion', async () => {
    const { verbs, lockWord } = cluster();
    const error = await verbs.cas({ ...lockWord, rkey: lockWord.rkey ^ 0xff }, 0n, 1n).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FabricAccessError);
    expect(error).toMatchObject({ status: 'bad-rkey', detail: expect.stringMatching(/does not match region 0/) });
    await expect(verbs.faa({ ...lockWord, offset: 4 }, 1n)).rejects.toMatchObject({ status: 'misaligned' });
    await expect(verbs.read({ ...lockWord, node: 9 }, 8)).rejects.toMatchObject({ status: 'unreachable' });
    const silent = new QueuePairVerbs({ post: async () => [], localNode: 1 });
    await expect(silent.faa(lockWord, 1n)).rejects.toMatchObject({ status: 'unreachable' });
  });

  it('post keeps batch order and returns every completion, failures included', async () => {
    const { verbs, lockWord } = cluster();
    const completions = await verbs.post([
      { op: 'faa', addr: lockWord, add: 2n },
      { op: 'cas', addr: { ...lockWord, offset: 3 }, compare: 0n, swap: 1n },
      { op: 'cas', addr: lockWord, compare: 2n, swap: 7n },
    ]);
    expect(completions.map((c) => [c.status, c.value])).toEqual([
      ['ok', 0n],
      ['misaligned', undefined],
      ['ok', 2n],
    ]);
  });

  it('CPU access works on its own node only, and only when local memory is given', async () => {
    const { verbs, lockWord, descWord, nic, post } = cluster();
    expect(verbs.isLocal(descWord)).toBe(true);
    expect(verbs.isLocal(lockWord)).toBe(false);
    await verbs.cpu.store(descWord, 9n);
    expect(await verbs.cpu.cas(descWord, 9n, 10n)).toBe(9n);
    expect(await verbs.cpu.faa(descWord, 1n)).toBe(10n);
    expect(await verbs.cpu.load(descWord)).toBe(11n);
    expect(nic(1).counters.snapshot().verbs).toBe(0); // the CPU path issues no verbs
    await expect(verbs.cpu.load(lockWord)).rejects.toMatchObject({ status: 'unknown-node' });

    const remoteOnly = new QueuePairVerbs({ post, localNode: 1 });
    expect(remoteOnly.isLocal(descWord)).toBe(false);
    await expect(remoteOnly.cpu.load(descWord)).rejects.toBeInstanceOf(FabricAccessError);
    await expect(remoteOnly.cpu.load(descWord)).rejects.toMatchObject({ status: 'unsupported' });
  });
});
