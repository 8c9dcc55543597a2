import { createSimCluster } from '@lockfabric/sim';
import type { Trace } from '@lockfabric/ports';
import { mcs } from '../src/index.js';
import type { McsClient } from '../src/index.js';

type Counts = Record<string, number>;

/** A small `sim` cluster without jitter for scripted MCS scenarios. */
export function scenario(options: { protocolOptions?: Record<string, string | number | boolean>; trace?: Trace } = {}) {
  const { cluster, scheduler } = createSimCluster({
    seed: 1,
    lockCount: 16,
    entryBytes: mcs.entryBytes,
    jitterNs: 0,
    computeNodes: 2,
    ...(options.trace ? { trace: options.trace } : {}),
  });
  const memoryNode = cluster.memoryNodeIds[0]!;
  const table = cluster.layout.memoryNodes[0]!;
  const client = (index: number) => {
    const node = cluster.computeNodeIds[index % cluster.computeNodeIds.length]!;
    const ports = cluster.clientPorts({ node, client: index });
    return { ports, lock: mcs.createClient(ports, options.protocolOptions) as McsClient };
  };
  const tailWord = (lock: number) => cluster.node(memoryNode).memory.cpuLoad({ ...table, offset: lock * mcs.entryBytes });
  const counterWord = (lock: number) => cluster.node(memoryNode).memory.cpuLoad({ ...table, offset: lock * mcs.entryBytes + 8 });
  /** Verbs served so far, by node kind and opcode (zero counts left out). */
  const verbs = () => {
    const mn: Counts = {};
    const cn: Counts = {};
    for (const [node, snapshot] of Object.entries(cluster.nicCounters())) {
      const target = cluster.isMemoryNode(Number(node)) ? mn : cn;
      for (const [op, n] of Object.entries(snapshot.byOpcode as Counts)) if (n > 0) target[op] = (target[op] ?? 0) + n;
    }
    return { mn, cn };
  };
  const at = (ns: number) => cluster.clock.sleep(Math.max(0, ns - cluster.clock.nowNs()));
  return { cluster, scheduler, client, tailWord, counterWord, verbs, at, now: () => cluster.clock.nowNs() };
}

export function diff(after: Counts, before: Counts): Counts {
  const out: Counts = {};
  for (const [op, n] of Object.entries(after)) if (n - (before[op] ?? 0) !== 0) out[op] = n - (before[op] ?? 0);
  return out;
}
