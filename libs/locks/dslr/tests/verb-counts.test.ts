import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';
import type { DslrClient } from '../src/index.js';

type Counts = Record<string, number>;

function nonZero(counts: Counts): Counts {
  return Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));
}

/** One client, one lock, nobody else: verbs served by the memory node for acquire and for release. */
async function uncontended(mode: 'shared' | 'exclusive', options: Record<string, string | number | boolean> = {}) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: dslr.entryBytes });
  const client = dslr.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 }), options) as DslrClient;
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  let afterAcquire: Counts = {};
  let heldWord = 0n;
  const run = (async () => {
    const grant = await client.acquire(3, mode);
    afterAcquire = { ...memory.nic.counters.snapshot().byOpcode };
    heldWord = memory.memory.cpuLoad({ ...cluster.layout.memoryNodes[0]!, offset: 3 * 8 });
    await client.release(grant);
  })();
  await scheduler.run();
  await run;
  const total = memory.nic.counters.snapshot().byOpcode as Counts;
  const release = nonZero(Object.fromEntries(Object.entries(total).map(([op, n]) => [op, n - (afterAcquire[op] ?? 0)])));
  return { acquire: nonZero(afterAcquire), release, heldWord, word: memory.memory.cpuLoad({ ...cluster.layout.memoryNodes[0]!, offset: 3 * 8 }) };
}

describe('dslr: verbs without contention (spec I11)', () => {
  it('exclusive: one FAA to acquire, one fenced CAS to release; the word ends drained', async () => {
    const counts = await uncontended('exclusive');
    expect(counts).toEqual({ acquire: { faa: 1 }, release: { cas: 1 }, heldWord: 0x0000_0000_0001_0000n, word: 0x0001_0000_0001_0000n });
  });

  it('shared: one FAA to acquire, one fenced CAS to release', async () => {
    const counts = await uncontended('shared');
    expect(counts).toEqual({ acquire: { faa: 1 }, release: { cas: 1 }, heldWord: 0x0000_0000_0000_0001n, word: 0x0000_0001_0000_0001n });
  });

  it('the same with update locks on (six-field word) and with a multi-slot ticket', async () => {
    expect(await uncontended('exclusive', { updateLocks: true })).toMatchObject({ acquire: { faa: 1 }, release: { cas: 1 } });
    const multi = await uncontended('shared', { maxSlots: 8, slots: 8 });
    expect(multi).toEqual({ acquire: { faa: 1 }, release: { cas: 1 }, heldWord: 8n, word: (8n << 32n) | 8n });
  });

  it('the paper’s release (paperLiteralFaaRelease): one FAA to acquire, one FAA to release', async () => {
    expect(await uncontended('exclusive', { paperLiteralFaaRelease: true })).toEqual({ acquire: { faa: 1 }, release: { faa: 1 }, heldWord: 0x0000_0000_0001_0000n, word: 0x0001_0000_0001_0000n });
    expect(await uncontended('shared', { paperLiteralFaaRelease: true })).toMatchObject({ acquire: { faa: 1 }, release: { faa: 1 } });
  });
});
