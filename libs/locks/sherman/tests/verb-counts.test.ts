import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { sherman } from '../src/index.js';

/** Verbs the memory NIC served, by opcode, without zero entries. */
function served(counts: Record<string, number>, before: Record<string, number> = {}): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).map(([op, n]) => [op, n - (before[op] ?? 0)]).filter(([, n]) => n !== 0));
}

async function twoClientsOneNode(options: Record<string, boolean | number>) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: sherman.entryBytes });
  const node = cluster.computeNodeIds[0]!;
  const a = sherman.createClient(cluster.clientPorts({ node, client: 0 }), options);
  const b = sherman.createClient(cluster.clientPorts({ node, client: 1 }), options);
  const nic = cluster.node(cluster.memoryNodeIds[0]!).nic;
  const marks: Record<string, Record<string, number>> = {};
  const mark = (name: string) => (marks[name] = { ...nic.counters.snapshot().byOpcode });
  const run = (async () => {
    const first = await a.acquire(2, 'exclusive');
    mark('a acquired');
    const waiting = b.acquire(2, 'exclusive');
    await a.release(first);
    const second = await waiting;
    mark('b acquired');
    await b.release(second);
    mark('b released');
  })();
  await scheduler.run();
  await run;
  return {
    aAcquire: served(marks['a acquired']!),
    handover: served(marks['b acquired']!, marks['a acquired']),
    bRelease: served(marks['b released']!, marks['b acquired']),
  };
}

describe('sherman: verbs without contention from other nodes', () => {
  it('hierarchical: one CAS to take the word, a local handover with no verb, one WRITE to free it', async () => {
    expect(await twoClientsOneNode({})).toEqual({ aAcquire: { cas: 1 }, handover: {}, bRelease: { write: 1 } });
  });
  it('with maxLocalHandovers=0 the word is freed and taken again at each release', async () => {
    expect(await twoClientsOneNode({ maxLocalHandovers: 0 })).toEqual({ aAcquire: { cas: 1 }, handover: { write: 1, cas: 1 }, bRelease: { write: 1 } });
  });
  it('Sherman-NH (hierarchy=false): each client CASes the word itself (B retries while A holds)', async () => {
    const counts = await twoClientsOneNode({ hierarchy: false });
    expect(counts.aAcquire).toEqual({ cas: 1 });
    expect(counts.handover.write).toBe(1);
    expect(counts.handover.cas).toBeGreaterThanOrEqual(1);
    expect(counts.bRelease).toEqual({ write: 1 });
  });
});
