import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { dslrBackoff } from '../src/index.js';

type Counts = Record<string, number>;
const nonZero = (counts: Counts): Counts => Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));

async function uncontended(mode: 'shared' | 'exclusive') {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: dslrBackoff.entryBytes });
  const client = dslrBackoff.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 }));
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  let afterAcquire: Counts = {};
  const run = (async () => {
    const grant = await client.acquire(5, mode);
    afterAcquire = { ...memory.nic.counters.snapshot().byOpcode };
    await client.release(grant);
  })();
  await scheduler.run();
  await run;
  const total = memory.nic.counters.snapshot().byOpcode as Counts;
  return {
    acquire: nonZero(afterAcquire),
    release: nonZero(Object.fromEntries(Object.entries(total).map(([op, n]) => [op, n - (afterAcquire[op] ?? 0)]))),
  };
}

describe('dslr-backoff: verbs without contention', () => {
  it('exclusive: one FAA to acquire, one FAA to release', async () => {
    expect(await uncontended('exclusive')).toEqual({ acquire: { faa: 1 }, release: { faa: 1 } });
  });
  it('shared: one FAA to acquire, one FAA to release', async () => {
    expect(await uncontended('shared')).toEqual({ acquire: { faa: 1 }, release: { faa: 1 } });
  });
});
