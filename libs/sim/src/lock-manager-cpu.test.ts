import { forwardProgram } from '@lockfabric/switch';
import type { LockPacket } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { LockManagerCores } from './lock-manager-cpu.js';
import type { LockManagerCpuConfig } from './lock-manager-cpu.js';
import { VirtualScheduler } from './scheduler.js';
import { createSimCluster } from './substrates.js';

const X_NS = 700;

/** Times at which `count` packets submitted together at t = 1 000 are handled. */
async function handledAt(cores: number, count: number, queueBound?: number): Promise<{ times: number[]; accepted: boolean[]; cpu: LockManagerCores }> {
  const scheduler = new VirtualScheduler();
  const cpu = new LockManagerCores(scheduler, cores, X_NS, queueBound);
  const times: number[] = [];
  const accepted: boolean[] = [];
  scheduler.at(1_000, () => {
    for (let i = 0; i < count; i++) accepted.push(cpu.submit(() => times.push(scheduler.nowNs())));
  });
  await scheduler.run();
  return { times, accepted, cpu };
}

describe('LockManagerCores', () => {
  it('one core: two packets arriving together are handled X ns apart, FIFO', async () => {
    const { times, cpu } = await handledAt(1, 2);
    expect(times).toEqual([1_000 + X_NS, 1_000 + 2 * X_NS]);
    expect(cpu.counters).toEqual({ served: 2, dropped: 0, maxQueued: 2, queueingNs: X_NS });
  });

  it('two cores: two packets arriving together are handled together; a third waits', async () => {
    expect((await handledAt(2, 2)).times).toEqual([1_000 + X_NS, 1_000 + X_NS]);
    expect((await handledAt(2, 3)).times).toEqual([1_000 + X_NS, 1_000 + X_NS, 1_000 + 2 * X_NS]);
  });

  it('is bounded: beyond the queue bound a packet is dropped and counted', async () => {
    const { times, accepted, cpu } = await handledAt(1, 3, 2);
    expect(accepted).toEqual([true, true, false]);
    expect(times).toHaveLength(2);
    expect(cpu.counters.dropped).toBe(1);
  });

  it('rejects nonsense settings', () => {
    const scheduler = new VirtualScheduler();
    expect(() => new LockManagerCores(scheduler, 0, 10)).toThrow(RangeError);
    expect(() => new LockManagerCores(scheduler, 1, -1)).toThrow(RangeError);
    expect(() => new LockManagerCores(scheduler, 1, 10, 0)).toThrow(RangeError);
  });
});

/**
 * Two client machines each send one ACQUIRE to the server machine at t = 0 (no jitter, so they
 * arrive together); returns when the server's service handler and a plain handler saw them.
 */
async function serverArrivals(lockManagerCpu?: LockManagerCpuConfig): Promise<{ service: number[]; plain: number[]; stats: ReturnType<ReturnType<typeof createSimCluster>['cluster']['lockManagerCpuStats']> }> {
  const { cluster, scheduler } = createSimCluster({
    seed: 1,
    lockCount: 16,
    entryBytes: 8,
    computeNodes: 3,
    jitterNs: 0,
    switchProgram: forwardProgram(),
    switchLinks: 'fifo',
    ...(lockManagerCpu ? { lockManagerCpu } : {}),
  });
  const [server, a, b] = cluster.computeNodeIds as [number, number, number];
  const service: number[] = [];
  const plain: number[] = [];
  cluster.servicePorts({ node: server, client: 1_000 }).switchPort!.onPacket(() => service.push(scheduler.nowNs()));
  cluster.clientPorts({ node: server, client: 0 }).switchPort!.onPacket(() => plain.push(scheduler.nowNs()));
  for (const from of [a, b]) {
    const packet: LockPacket = { type: 'acquire', lock: 1, machine: from, task: 0, mode: 'exclusive', incarnation: 0, seq: 0, flags: 0, dst: server };
    scheduler.at(0, () => cluster.switchPort(from).send(packet));
  }
  await scheduler.run();
  return { service, plain, stats: cluster.lockManagerCpuStats() };
}

describe('InMemoryCluster lock-manager CPU', () => {
  it('off by default: a service sees packets when they arrive, like any handler', async () => {
    const { service, plain, stats } = await serverArrivals();
    expect(service).toHaveLength(2);
    expect(service).toEqual(plain);
    expect(service[0]).toBe(service[1]);
    expect(stats).toEqual({});
  });

  it('one core: the service handles the two packets X and 2X after they arrive', async () => {
    const { service, plain, stats } = await serverArrivals({ packetNs: X_NS, coresFor: () => 1 });
    const arrival = plain[0]!;
    expect(plain).toEqual([arrival, arrival]);
    expect(service).toEqual([arrival + X_NS, arrival + 2 * X_NS]);
    expect(Object.values(stats)).toEqual([{ served: 2, dropped: 0, maxQueued: 2, queueingNs: X_NS }]);
  });

  it('cores per machine: with 2 cores both are handled X after they arrive', async () => {
    const { service, plain } = await serverArrivals({ packetNs: X_NS, coresFor: () => 2 });
    expect(service).toEqual([plain[0]! + X_NS, plain[0]! + X_NS]);
  });

  it('packets that are not lock-manager work reach the service at once', async () => {
    const { service, plain } = await serverArrivals({ packetNs: X_NS, coresFor: () => 1, isWork: (p) => p.type !== 'acquire' });
    expect(service).toEqual(plain);
  });
});
