import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { caslock } from '../src/index.js';

async function uncontended(variant: 'exclusive' | 'rw', mode: 'shared' | 'exclusive') {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: caslock.entryBytes });
  const node = cluster.computeNodeIds[0]!;
  const client = caslock.createClient(cluster.clientPorts({ node, client: 0 }), { variant });
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  let afterAcquire: Record<string, number> = {};
  const run = (async () => {
    const grant = await client.acquire(3, mode);
    afterAcquire = { ...memory.nic.counters.snapshot().byOpcode };
    await client.release(grant);
  })();
  await scheduler.run();
  await run;
  const total = memory.nic.counters.snapshot().byOpcode;
  const release = Object.fromEntries(Object.entries(total).map(([op, n]) => [op, n - (afterAcquire[op] ?? 0)]).filter(([, n]) => n !== 0));
  const acquire = Object.fromEntries(Object.entries(afterAcquire).filter(([, n]) => n !== 0));
  return { acquire, release, word: memory.memory.cpuLoad({ ...cluster.layout.memoryNodes[0]!, offset: 3 * 8 }) };
}

describe('caslock: verbs without contention', () => {
  it('exclusive variant: one CAS to acquire, one WRITE to release', async () => {
    const counts = await uncontended('exclusive', 'exclusive');
    expect(counts).toEqual({ acquire: { cas: 1 }, release: { write: 1 }, word: 0n });
  });
  it('rw variant, writer: one CAS to acquire, one CAS to release', async () => {
    expect(await uncontended('rw', 'exclusive')).toEqual({ acquire: { cas: 1 }, release: { cas: 1 }, word: 0n });
  });
  it('rw variant, reader: one FAA to acquire, one FAA to release', async () => {
    expect(await uncontended('rw', 'shared')).toEqual({ acquire: { faa: 1 }, release: { faa: 1 }, word: 0n });
  });
});
