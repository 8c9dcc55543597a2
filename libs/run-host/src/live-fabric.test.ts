import { createHook } from 'node:async_hooks';
import { Nic, NodeMemory } from '@lockfabric/fabric';
import { startMemoryServer, type MemoryServer } from '@lockfabric/live';
import type { Completion, WorkRequest } from '@lockfabric/ports';
import { afterEach, describe, expect, it } from 'vitest';
import { LiveFabric } from './live-fabric.js';
import { VerbGate } from './verb-gate.js';

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

describe('LiveFabric.post: settled', () => {
  it('calls settled once per post, before the promise resolves, on every path', async () => {
    const { server, rkey } = await memoryNode();
    const own = new NodeMemory(1);
    const ownRegion = own.register(64);
    const fabric = new LiveFabric(1, new Nic(own), quiet);
    cleanups.push(() => fabric.close());
    await fabric.addMemoryNode(server.address);
    const remote: WorkRequest = { op: 'faa', addr: { node: 9, region: 0, rkey, offset: 0 }, add: 1n };
    const local: WorkRequest = { op: 'faa', addr: { node: 1, region: ownRegion.region, rkey: ownRegion.rkey, offset: 0 }, add: 1n };
    const outOfRange: WorkRequest = { op: 'faa', addr: { node: 9, region: 0, rkey, offset: 0 }, add: -1n };
    const unknown: WorkRequest = { op: 'faa', addr: { node: 5, region: 0, rkey: 1, offset: 0 }, add: 1n };
    const cases: [string, readonly WorkRequest[], string[]][] = [
      ['remote', [remote, remote], ['ok', 'ok']],
      ['loopback', [local], ['ok']],
      ['split over two nodes', [remote, local, remote], ['ok', 'ok', 'ok']],
      ['refused before sending', [outOfRange], ['bad-request']],
      ['unknown node', [unknown], ['unknown-node']],
      ['empty', [], []],
    ];
    for (const [name, batch, statuses] of cases) {
      let calls = 0;
      const done = fabric.post(batch, undefined, () => calls++);
      const seen = await done.then((completions) => ({ calls, statuses: completions.map((c) => c.status) }));
      expect({ name, ...seen }).toStrictEqual({ name, calls: 1, statuses });
      expect(calls).toBe(1);
    }
  });

  it('a gated client post adds no promise over the queue pair (the reacting gate, the old path, adds one)', async () => {
    const { server, rkey } = await memoryNode();
    const fabric = new LiveFabric(1, new Nic(new NodeMemory(1)), quiet);
    cleanups.push(() => fabric.close());
    await fabric.addMemoryNode(server.address);
    const view = fabric.view();
    const faa: WorkRequest = { op: 'faa', addr: { node: 9, region: 0, rkey, offset: 0 }, add: 1n };
    const gate = new VerbGate(1);
    const posts = { bare: (b: readonly WorkRequest[]) => fabric.post(b), settling: gate.openSettling(view.post), reacting: gate.open(view.post) };
    const made: Record<string, number> = {};
    for (const [name, post] of Object.entries(posts)) {
      await post([faa]); // the first call pays for anything created lazily
      let created = 0;
      const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && created++) });
      hook.enable();
      const done = post([faa]);
      hook.disable();
      await done;
      made[name] = created;
    }
    expect(made['settling']).toBe(made['bare']);
    expect(made['reacting']).toBe((made['bare'] as number) + 1);
    await gate.drain(1_000, 1);
    expect(gate.inflightBatches).toBe(0);
  });
});

describe('LiveFabric.view: pins', () => {
  it('follow keeps the pins it has while no incarnation changed (nothing made per acquire), and takes the new one after a rebind', async () => {
    const { server, rkey } = await memoryNode();
    const fabric = new LiveFabric(1, new Nic(new NodeMemory(1)), quiet);
    cleanups.push(() => fabric.close());
    await fabric.addMemoryNode(server.address);
    const view = fabric.view();
    const pins = () => view.incarnations?.() ?? new Map<number, number>();
    view.follow();
    const first = pins();
    expect(first.size).toBe(1);
    view.follow();
    view.follow();
    // the same map: the old follow built a new one (and a new options object) on every call
    expect(pins()).toBe(first);
    expect(view.lost()).toBe(false);
    // the queue pair rebinds to another incarnation: the pins are lost until the next follow
    const qp = (fabric as unknown as { queuePairs: Map<number, { incarnation: number | undefined }> }).queuePairs.get(9)!;
    const old = qp.incarnation as number;
    qp.incarnation = old + 1;
    expect(view.lost()).toBe(true);
    const faa: WorkRequest = { op: 'faa', addr: { node: 9, region: 0, rkey, offset: 0 }, add: 1n };
    expect((await view.post([faa]))[0]?.status).toBe('unreachable'); // pinned to the lost incarnation
    view.follow();
    expect(pins()).not.toBe(first);
    expect([...pins()]).toStrictEqual([[9, old + 1]]);
    expect(view.lost()).toBe(false);
    qp.incarnation = old;
  });
});
