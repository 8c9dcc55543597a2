import { createSimCluster } from '@lockfabric/sim';
import type { ClientPorts, Clock } from '@lockfabric/ports';
import { drtm } from '../src/index.js';
import type { DrtmClient } from '../src/index.js';

type Counts = Record<string, number>;

/** A small `sim` cluster without jitter for scripted DrTM scenarios. */
export function scenario(protocolOptions: Record<string, string | number | boolean> = {}) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 16, entryBytes: drtm.entryBytes, jitterNs: 0, computeNodes: 2 });
  const table = cluster.layout.memoryNodes[0]!;
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  const client = (index: number, clockOffsetNs = 0) => {
    const node = cluster.computeNodeIds[index % cluster.computeNodeIds.length]!;
    const ports = cluster.clientPorts({ node, client: index });
    const lockPorts = clockOffsetNs === 0 ? ports : { ...ports, clock: offsetClock(ports.clock, clockOffsetNs) };
    return { ports, lock: drtm.createClient(lockPorts, protocolOptions) as DrtmClient };
  };
  const word = (lock: number) => memory.memory.cpuLoad({ ...table, offset: lock * drtm.entryBytes });
  const verbs = (): Counts => Object.fromEntries(Object.entries(memory.nic.counters.snapshot().byOpcode as Counts).filter(([, n]) => n > 0));
  const at = (ns: number) => cluster.clock.sleep(Math.max(0, ns - cluster.clock.nowNs()));
  return { cluster, scheduler, client, word, verbs, at, now: () => cluster.clock.nowNs() };
}

/** A clock that reads `offsetNs` ahead of the substrate's (skew injection); sleeping is unchanged. */
export function offsetClock(clock: Clock, offsetNs: number): Clock {
  return { nowNs: () => clock.nowNs() + offsetNs, sleep: (ns, signal) => clock.sleep(ns, signal) };
}

/** Runs `clientPorts` through `offsetClock` with an offset chosen per client. */
export function withSkew(ports: ClientPorts, offsetNs: number): ClientPorts {
  return { ...ports, clock: offsetClock(ports.clock, offsetNs) };
}

export function diff(after: Counts, before: Counts): Counts {
  const out: Counts = {};
  for (const [op, n] of Object.entries(after)) if (n - (before[op] ?? 0) !== 0) out[op] = n - (before[op] ?? 0);
  return out;
}
