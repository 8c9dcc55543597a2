import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { rmaRw } from '../src/index.js';
import type { LockMode } from '@lockfabric/ports';

function served(counts: Record<string, number>, before: Record<string, number> = {}): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([op, n]) => [op, n - (before[op] ?? 0)]).filter(([, n]) => n !== 0));
}

/** One client, nobody else: verbs of acquire and release, and the entry afterwards (three words). */
async function uncontended(mode: LockMode) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: rmaRw.entryBytes });
  const client = rmaRw.createClient(cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 }));
  const memory = cluster.node(cluster.memoryNodeIds[0]!);
  let acquired: Record<string, number> = {};
  const run = (async () => {
    const grant = await client.acquire(1, mode);
    acquired = { ...memory.nic.counters.snapshot().byOpcode };
    await client.release(grant);
  })();
  await scheduler.run();
  await run;
  const base = cluster.layout.memoryNodes[0]!;
  const word = (offset: number) => memory.memory.cpuLoad({ ...base, offset: rmaRw.entryBytes + offset });
  return { acquire: served(acquired), release: served(memory.nic.counters.snapshot().byOpcode, acquired), entry: [word(0), word(8), word(16)] };
}

describe('rma-rw: verbs without contention', () => {
  it('reader: one FAA to arrive, one FAA to depart; the batch keeps counting (1 arrived, 1 departed)', async () => {
    expect(await uncontended('shared')).toEqual({ acquire: { faa: 1 }, release: { faa: 1 }, entry: [0n, 0n, 1n | (1n << 32n)] });
  });

  it('writer: MCS swap, READ phase and counters, FAA the flag; release closes the phase (READ, CAS) and frees the MCS tail (CAS)', async () => {
    expect(await uncontended('exclusive')).toEqual({
      acquire: { 'masked-cas': 1, read: 1, faa: 1 },
      release: { read: 1, cas: 2 },
      entry: [0n, 0n, 0n],
    });
  });

  it('writer to a queued writer within the phase: two WRITEs (phase length, MCS handover), the flag stays up', async () => {
    const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: rmaRw.entryBytes });
    const [n0, n1] = cluster.computeNodeIds as [number, number];
    const a = rmaRw.createClient(cluster.clientPorts({ node: n0, client: 0 }));
    const b = rmaRw.createClient(cluster.clientPorts({ node: n1, client: 0 }));
    const nic = cluster.node(cluster.memoryNodeIds[0]!).nic;
    const marks: Record<string, number>[] = [];
    const run = (async () => {
      const first = await a.acquire(0, 'exclusive');
      const second = b.acquire(0, 'exclusive');
      // Let B swap itself into the tail and link into A's queue node before A releases.
      await cluster.clientPorts({ node: n0, client: 1 }).clock.sleep(20_000);
      marks.push({ ...nic.counters.snapshot().byOpcode });
      await a.release(first);
      marks.push({ ...nic.counters.snapshot().byOpcode });
      await b.release(await second);
    })();
    await scheduler.run();
    await run;
    // B's swap and link happen before the first mark; A's release is the WRITEs below (the MCS
    // handover WRITE goes to B's compute node, not the memory NIC).
    expect(served(marks[1]!, marks[0])).toEqual({ write: 1 });
    const handovers = cluster.node(n1).nic.counters.snapshot().byOpcode;
    expect(handovers.write).toBe(1);
  });
});
