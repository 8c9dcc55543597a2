/**
 * The README's example: two clients on different compute nodes of a `sim` cluster take turns on
 * lock 3. e2e/tests/docs-example.test.ts compiles and runs it, so the README cannot drift from
 * the API.
 */
import { protocolById } from '@lockfabric/lock-catalog';
import type { LockClient } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';

/** A protocol's `--opt` options, e.g. `{ leaseNs: 200_000_000 }`. */
type Options = Readonly<Record<string, string | number | boolean>>;

export interface Hold {
  readonly name: string;
  readonly fromNs: number;
  readonly toNs: number;
}

export async function twoClientsOneLock(protocol = 'dslr', seed = 7, options: Options = {}): Promise<Hold[]> {
  const definition = protocolById(protocol);
  const { cluster, scheduler } = createSimCluster({ seed, lockCount: 16, entryBytes: definition.entryBytes });
  const [cn0, cn1] = cluster.computeNodeIds;
  const alice = definition.createClient(cluster.clientPorts({ node: cn0!, client: 0 }), options);
  const bob = definition.createClient(cluster.clientPorts({ node: cn1!, client: 1 }), options);
  const holds: Hold[] = [];

  async function work(client: LockClient, name: string): Promise<void> {
    const grant = await client.acquire(3, 'exclusive', { timeoutMs: 20 });
    const fromNs = cluster.clock.nowNs();
    await cluster.clock.sleep(2_000); // the critical section: 2 µs of virtual time
    holds.push({ name, fromNs, toNs: cluster.clock.nowNs() });
    await client.release(grant);
  }

  const done = Promise.all([work(alice, 'alice'), work(bob, 'bob')]);
  await scheduler.run(); // sim: run virtual time until nothing is scheduled
  await done;
  return holds;
}
