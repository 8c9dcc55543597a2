import { Nic, NodeMemory } from '@lockfabric/fabric';
import { startMemoryServer, type MemoryServer } from '@lockfabric/live';
import type { Completion, WorkRequest } from '@lockfabric/ports';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveFabric } from './live-fabric.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A memory node (node 9, one 4 KiB region) served by its NIC on a real port (no TLS: unit test). */
async function memoryNode(): Promise<{ server: MemoryServer; rkey: number }> {
  const memory = new NodeMemory(9);
  const region = memory.register(4096);
  const nic = new Nic(memory);
  const server = await startMemoryServer({
    host: '127.0.0.1',
    logger: quiet,
    executor: {
      executeBatch: (batch, initiator) => nic.executeBatch(batch, initiator),
      describe: () => ({ node: 9, regions: [{ region: region.region, rkey: region.rkey, sizeBytes: 4096, name: 'locks' }], lockTables: [] }),
    },
  });
  cleanups.push(() => server.kill());
  return { server, rkey: region.rkey };
}

describe('LiveFabric.post', () => {
  it("hands a one-node batch to the queue pair and returns the queue pair's own promise (no added hops)", async () => {
    const { server, rkey } = await memoryNode();
    const fabric = new LiveFabric(1, new Nic(new NodeMemory(1)), quiet);
    cleanups.push(() => fabric.close());
    await fabric.addMemoryNode(server.address);
    const qp = (fabric as unknown as { queuePairs: Map<number, { post: (b: readonly WorkRequest[]) => Promise<Completion[]> }> }).queuePairs.get(9)!;
    const own: Promise<Completion[]>[] = [];
    const post = qp.post.bind(qp);
    qp.post = (batch) => {
      const promise = post(batch);
      own.push(promise);
      return promise;
    };
    const faa: WorkRequest = { op: 'faa', addr: { node: 9, region: 0, rkey, offset: 0 }, add: 1n };
    const returned = fabric.post([faa, faa]);
    expect(own).toHaveLength(1);
    expect(returned).toBe(own[0]);
    expect((await returned).map((c) => c.value)).toStrictEqual([0n, 1n]);
  });
});
