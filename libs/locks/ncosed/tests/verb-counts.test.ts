import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { ncosed } from '../src/index.js';
import type { LockMode } from '@lockfabric/ports';

function served(counts: Record<string, number>, before: Record<string, number> = {}): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([op, n]) => [op, n - (before[op] ?? 0)]).filter(([, n]) => n !== 0));
}

async function uncontended(mode: LockMode) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: ncosed.entryBytes });
  const client = ncosed.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 }));
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  let acquired: Record<string, number> = {};
  const run = (async () => {
    const grant = await client.acquire(2, mode);
    acquired = { ...memory.nic.counters.snapshot().byOpcode };
    await client.release(grant);
  })();
  await scheduler.run();
  await run;
  return { acquire: served(acquired), release: served(memory.nic.counters.snapshot().byOpcode, acquired), word: memory.memory.cpuLoad({ ...cluster.layout.memoryNodes[0]!, offset: 2 * 8 }) };
}

describe('ncosed: verbs without contention (DSLR §6.1: one CAS or one FAA)', () => {
  it('exclusive: one CAS into the tail, one CAS out of it', async () => {
    expect(await uncontended('exclusive')).toEqual({ acquire: { cas: 1 }, release: { cas: 1 }, word: 0n });
  });
  it('shared: one FAA +1, one FAA −1', async () => {
    expect(await uncontended('shared')).toEqual({ acquire: { faa: 1 }, release: { faa: 1 }, word: 0n });
  });
  it('a conflict goes by messages: a reader behind a writer FAAs in and out, asks the writer, and is counted in by it', async () => {
    const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: ncosed.entryBytes });
    const [n0, n1] = cluster.computeNodeIds as [number, number];
    const writer = ncosed.createClient(cluster.clientPorts({ node: n0, client: 0 }));
    const reader = ncosed.createClient(cluster.clientPorts({ node: n1, client: 0 }));
    const nic = cluster.node(cluster.memoryNodeIds[0]!).nic;
    const marks: Record<string, number>[] = [];
    const run = (async () => {
      const w = await writer.acquire(0, 'exclusive');
      marks.push({ ...nic.counters.snapshot().byOpcode });
      const r = reader.acquire(0, 'shared');
      await cluster.clientPorts({ node: n0, client: 1 }).clock.sleep(20_000);
      await writer.release(w);
      await reader.release(await r);
      marks.push({ ...nic.counters.snapshot().byOpcode });
    })();
    await scheduler.run();
    await run;
    // reader: FAA +1, FAA −1, (request, grant); writer: FAA +1 for it, then CAS out of the tail,
    // which fails once because the count it guessed (0) now holds the reader; reader: FAA −1.
    expect(served(marks[1]!, marks[0])).toEqual({ faa: 4, cas: 2 });
  });
});
