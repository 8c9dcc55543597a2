import { lockAddress } from '@lockfabric/ports';
import type { Completion, WorkRequest } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { createSimCluster } from './substrates.js';

/**
 * Node A posts three FAAs (+1, +10, +100) on lock 0 in one doorbell and one FAA on lock 1; node B
 * posts one on lock 2. A's queue pairs break 100 ns later, before any completion is due, with
 * `coins` answering "did this verb run?" in turn. Returns the completions and the lock words.
 */
async function flushAfterPosts(coins: boolean[]) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: 8, computeNodes: 2, flushableQueuePairs: true });
  const [a, b] = cluster.computeNodeIds as [number, number];
  const addr = (lock: number) => lockAddress(cluster.layout, lock);
  const faa = (lock: number, add: bigint): WorkRequest => ({ op: 'faa', addr: addr(lock), add });
  const onA = cluster.clientPorts({ node: a, client: 0 }).verbs;
  const onB = cluster.clientPorts({ node: b, client: 1 }).verbs;
  const done: Record<string, Completion[]> = {};
  void onA.post([faa(0, 1n), faa(0, 10n), faa(0, 100n)]).then((c) => (done['batch'] = c));
  void onA.post([faa(1, 1n)]).then((c) => (done['single'] = c));
  void onB.post([faa(2, 1n)]).then((c) => (done['other'] = c));
  let asked = 0;
  let outcome: { flushed: number; ran: number } | undefined;
  scheduler.at(100, () => (outcome = cluster.flushQueuePairs(a, () => coins[asked++] ?? false)));
  await scheduler.run();
  // After the break, a new post on A's queue pair runs and completes as usual.
  const after = await Promise.all([onA.faa(addr(3), 1n), scheduler.run()]);
  const word = (lock: number) => cluster.node(addr(lock).node).memory.cpuLoad(addr(lock));
  return { done, outcome, asked, words: [0, 1, 2, 3].map(word), after: after[0] };
}

describe('InMemoryCluster.flushQueuePairs (lost completions)', () => {
  it('fails every verb in flight from the node unreachable; only a prefix of each batch ran', async () => {
    // batch: +1 ran, +10 did not, so +100 (after it on the connection) cannot have run; single: ran
    const { done, outcome, asked, words, after } = await flushAfterPosts([true, false, true]);
    expect(done['batch']!.map((c) => c.status)).toEqual(['unreachable', 'unreachable', 'unreachable']);
    expect(done['single']!.map((c) => c.status)).toEqual(['unreachable']);
    expect(done['other']!.map((c) => c.status)).toEqual(['ok']);
    expect(words).toEqual([1n, 1n, 1n, 1n]);
    expect(outcome).toEqual({ flushed: 4, ran: 2 });
    expect(asked).toBe(3);
    expect(after).toBe(0n);
  });

  it('the coin alone decides: all ran, or none did, and the completions say the same', async () => {
    const all = await flushAfterPosts([true, true, true, true]);
    expect(all.words).toEqual([111n, 1n, 1n, 1n]);
    expect(all.outcome).toEqual({ flushed: 4, ran: 4 });
    const none = await flushAfterPosts([]);
    expect(none.words).toEqual([0n, 0n, 1n, 1n]);
    expect(none.outcome).toEqual({ flushed: 4, ran: 0 });
    expect(none.done['batch']!.every((c) => c.status === 'unreachable')).toBe(true);
  });

  it('a break after silence holds what is in flight or posted meanwhile, then flushes it all', async () => {
    const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 2, entryBytes: 8, computeNodes: 1, flushableQueuePairs: true });
    const node = cluster.computeNodeIds[0]!;
    const verbs = cluster.clientPorts({ node, client: 0 }).verbs;
    const addr = lockAddress(cluster.layout, 0);
    const statuses: string[] = [];
    const post = () => void verbs.post([{ op: 'faa', addr, add: 1n }]).then(([c]) => statuses.push(`${c!.status}@${scheduler.nowNs()}`));
    let outcome: { flushed: number; ran: number } | undefined;
    post();
    scheduler.at(100, () => cluster.breakQueuePairs(node, 50_000, () => true, (o) => (outcome = o)));
    // Posted 20 µs into the silence: its completion would be due long before the break is seen.
    scheduler.at(20_000, post);
    await scheduler.run();
    expect(statuses).toEqual(['unreachable@50100', 'unreachable@50100']);
    expect(outcome).toEqual({ flushed: 2, ran: 2 });
    expect(cluster.node(addr.node).memory.cpuLoad(addr)).toBe(2n);
  });

  it('is refused on a cluster built without flushable queue pairs', () => {
    const { cluster } = createSimCluster({ seed: 1, lockCount: 1, entryBytes: 8, computeNodes: 1 });
    expect(() => cluster.flushQueuePairs(cluster.computeNodeIds[0]!, () => true)).toThrow(/flushableQueuePairs/);
  });
});
