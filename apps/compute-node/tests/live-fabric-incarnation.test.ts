import { Nic, NodeMemory } from '@lockfabric/fabric';
import { silentLogger, startMemoryServer } from '@lockfabric/live';
import type { MemoryExecutor, MemoryServer } from '@lockfabric/live';
import type { Completion, WorkRequest } from '@lockfabric/ports';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveFabric } from '@lockfabric/run-host';

const MEMORY = 7;

/** A memory node's table: one NIC over a 64-byte region; `applied` counts the verbs it executed. */
function table(): MemoryExecutor & { applied: number; nic: Nic } {
  const memory = new NodeMemory(MEMORY);
  memory.register(64);
  const nic = new Nic(memory);
  const out = {
    nic,
    applied: 0,
    executeBatch: (batch: readonly WorkRequest[], initiator: number): Completion[] => {
      out.applied += batch.length;
      return nic.executeBatch(batch, initiator);
    },
    describe: () => ({ node: MEMORY, regions: memory.regions().map((r) => ({ region: r.region, rkey: r.rkey, sizeBytes: r.sizeBytes, name: 'locks' })), lockTables: [] }),
  };
  return out;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(executor: MemoryExecutor, incarnation: number, port = 0): Promise<MemoryServer> {
  const server = await startMemoryServer({ executor, host: '127.0.0.1', port, incarnation, logger: silentLogger });
  cleanups.push(() => server.kill());
  return server;
}

describe('LiveFabric views across a memory-node restart', () => {
  it('refuses a verb pinned to the old incarnation and lets a client that follows reach the new table', async () => {
    const first = table();
    const server = await serve(first, 1);
    const fabric = new LiveFabric(1, new Nic(new NodeMemory(1)), silentLogger);
    cleanups.push(() => fabric.close());
    const description = await fabric.addMemoryNode(server.address);
    const rkey = description.regions[0]!.rkey;
    const release: WorkRequest = { op: 'write', addr: { node: MEMORY, region: 0, rkey, offset: 0 }, data: new Uint8Array(8) };

    const holder = fabric.view();
    const newcomer = fabric.view();
    holder.follow();
    expect((await holder.post([release]))[0]?.status).toBe('ok');

    server.kill();
    const second = table();
    await serve(second, 2, server.port);
    // The queue pair goes down on its next post and rebinds itself to incarnation 2.
    await fabric.post([release]);
    expect(await holder.settle(10_000)).toBe(true);
    expect(holder.lost()).toBe(true);

    // The holder's release was meant for the lost table: refused, never applied to the new one.
    const [refused] = await holder.post([release]);
    expect(refused?.status).toBe('unreachable');
    expect(refused?.detail).toMatch(/table lost/);
    expect(second.applied).toBe(0);

    newcomer.follow();
    expect(newcomer.lost()).toBe(false);
    expect((await newcomer.post([release]))[0]?.status).toBe('ok');
    expect(second.applied).toBe(1);
    const stats = fabric.rebindStats();
    expect(stats.incarnationChanges).toBe(1);
    expect(stats.downs).toBe(1);
  });
});
