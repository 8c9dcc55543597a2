import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { dslrBackoff } from '../src/index.js';

type Counts = Record<string, number>;
const nonZero = (counts: Counts): Counts => Object.fromEntries(Object.entries(counts).filter(([, n]) => n !== 0));

async function uncontended(mode: 'shared' | 'exclusive', options: Record<string, string | boolean> = {}) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: dslrBackoff.entryBytes });
  const client = dslrBackoff.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 }), options);
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
  it('exclusive: one FAA to acquire, one fenced CAS to release', async () => {
    expect(await uncontended('exclusive')).toEqual({ acquire: { faa: 1 }, release: { cas: 1 } });
  });
  it('shared: one FAA to acquire, one fenced CAS to release', async () => {
    expect(await uncontended('shared')).toEqual({ acquire: { faa: 1 }, release: { cas: 1 } });
  });
  it('with the paper’s release (paperLiteralFaaRelease): one FAA each', async () => {
    expect(await uncontended('exclusive', { paperLiteralFaaRelease: 'true' })).toEqual({ acquire: { faa: 1 }, release: { faa: 1 } });
  });
});
