import { createSimCluster } from '@lockfabric/sim';
import type { Mailbox, Message } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { ncosed } from '../src/index.js';

describe('ncosed: the request loop', () => {
  it('stops when the mailbox is closed (receive resolves undefined at once) instead of spinning', async () => {
    const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 2, entryBytes: ncosed.entryBytes });
    const ports = cluster.clientPorts({ node: cluster.computeNodeIds[0]!, client: 0 });
    let receives = 0;
    // A closed hub answers every receive with undefined; after 100 calls this one hangs instead,
    // so a loop that kept calling shows up as 100 calls rather than as a frozen test.
    const closed: Mailbox = {
      self: ports.mailbox.self,
      send: () => undefined,
      receive: () => (++receives <= 100 ? Promise.resolve(undefined) : new Promise<Message | undefined>(() => undefined)),
    };
    const client = ncosed.createClient({ ...ports, mailbox: closed });
    const run = (async () => {
      const grant = await client.acquire(0, 'exclusive');
      await client.release(grant);
    })();
    await scheduler.run();
    await run;
    expect(receives).toBe(1);
  });
});
