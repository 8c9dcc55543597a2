import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import { FabricAccessError, clientKey } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { rmaRw } from '../src/index.js';

/**
 * A verb that ran on the memory node but whose completion never came back: live, a queue pair's
 * stream that breaks fails every outstanding request `unreachable`, whether the memory node ran it
 * or not (as a real RDMA QP flushes its work requests in error). The sim never loses a completion,
 * so this scenario does it by hand: the first masked CAS (the MCS enqueue swap) runs, then throws.
 */
function losingFirstSwap(ports: ClientPorts): ClientPorts {
  let lost = false;
  const inner = ports.verbs;
  const maskedCas = async (...args: Parameters<ClientPorts['verbs']['maskedCas']>) => {
    const old = await inner.maskedCas(...args);
    if (lost) return old;
    lost = true;
    throw new FabricAccessError('unreachable', 'stream broke after the swap ran (scripted)');
  };
  const verbs = new Proxy(inner, {
    get: (target, key) => {
      if (key === 'maskedCas') return maskedCas;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...ports, verbs };
}

/**
 * Writer P holds lock 0. Writer C enqueues on lock 0, but its swap's completion is lost, so its
 * acquire fails although C's queue node is now lock 0's tail. C then takes lock 1 with the same
 * queue node. Writer W enqueues on lock 0 behind C's node and links into it; C releases lock 1.
 * Every step is recorded in one history.
 */
async function scenario(options: ProtocolOptions) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: rmaRw.entryBytes, computeNodes: 2 });
  const [n1, n2] = cluster.computeNodeIds as [number, number];
  const history = new HistoryRecorder();
  const now = () => cluster.clock.nowNs();
  const opts = { releaseLinkTimeoutNs: 100_000, ...options };
  const client = (ports: ClientPorts) => {
    const lock = rmaRw.createClient(ports, opts) as LockClient<Grant>;
    const key = clientKey(ports.self);
    return {
      async acquire(id: LockId, mode: LockMode, timeoutMs = 20) {
        history.invoke(key, 'acquire', id, mode, now());
        try {
          const grant = await lock.acquire(id, mode, { timeoutMs });
          history.ok(key, 'acquire', id, mode, now());
          return grant;
        } catch (error) {
          history.fail(key, 'acquire', id, mode, now(), (error as Error).name);
          return undefined;
        }
      },
      async release(grant: Grant) {
        history.invoke(key, 'release', grant.lock, grant.mode, now());
        await lock.release(grant);
        history.ok(key, 'release', grant.lock, grant.mode, now());
      },
    };
  };
  const p = client(cluster.clientPorts({ node: n1, client: 0 }));
  const c = client(losingFirstSwap(cluster.clientPorts({ node: n2, client: 1 })));
  const w = client(cluster.clientPorts({ node: n1, client: 2 }));
  const sleep = (ns: number) => cluster.clock.sleep(ns);
  const outcome = { cFailed: false, wGranted: false, lock1Again: false, lock0Again: false };
  const run = (async () => {
    const held = (await p.acquire(0, 'exclusive'))!;
    outcome.cFailed = (await c.acquire(0, 'exclusive')) === undefined;
    const other = (await c.acquire(1, 'exclusive'))!;
    const waiting = w.acquire(0, 'exclusive', 2);
    await sleep(20_000);
    await c.release(other);
    await sleep(20_000);
    await p.release(held);
    const got = await waiting;
    outcome.wGranted = got !== undefined;
    if (got) await w.release(got);
    // Afterwards both locks can be taken again, in either mode.
    const again1 = await p.acquire(1, 'shared', 2);
    outcome.lock1Again = again1 !== undefined;
    if (again1) await p.release(again1);
    const again0 = await p.acquire(0, 'exclusive', 2);
    outcome.lock0Again = again0 !== undefined;
    if (again0) await p.release(again0);
  })();
  await scheduler.run({ maxEvents: 200_000 });
  await run;
  return { outcome, verdict: checkHistory(history) };
}

describe('rma-rw: an enqueue swap whose completion was lost (live stream break)', () => {
  it('the writer linked behind the lost node is never handed a lock it does not own: exclusion holds, both locks are free again', async () => {
    const { outcome, verdict } = await scenario({});
    expect(outcome.cFailed).toBe(true);
    expect(verdict.violations).toEqual([]);
    // W waited behind a node nobody will hand the lock from, so it timed out; P's release cut the queue.
    expect(outcome.wGranted).toBe(false);
    expect(outcome).toMatchObject({ lock1Again: true, lock0Again: true });
  });

  it('mutant: the node reused under the same link generation hands lock 0 to the writer behind the lost enqueue, beside its holder', async () => {
    const { outcome, verdict } = await scenario({ mutantReuseAfterFailedSwap: true });
    expect(outcome.wGranted).toBe(true);
    expect(verdict.violations.map((v) => v.lock)).toEqual([0]);
  });

  it('mutant: a stale link taken for a successor keeps lock 1 in a writer phase with no writer, so readers never get in', async () => {
    const { outcome, verdict } = await scenario({ mutantRawSuccessorCheck: true });
    expect(verdict.violations).toEqual([]);
    expect(outcome).toMatchObject({ lock1Again: false, lock0Again: true });
  });
});

