import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import { FabricAccessError, clientKey } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { ENTRY_BYTES, alock } from '../src/index.js';

/** The client's first CAS that succeeds (its enqueue on the cohort tail) runs on the memory node, then fails `unreachable`. */
function losingFirstCas(ports: ClientPorts): ClientPorts {
  let lost = false;
  const inner = ports.verbs;
  const cas = async (...args: Parameters<ClientPorts['verbs']['cas']>) => {
    const old = await inner.cas(...args);
    if (lost || old !== args[1]) return old;
    lost = true;
    throw new FabricAccessError('unreachable', 'queue pair flushed after the CAS ran (scripted)');
  };
  const verbs = new Proxy(inner, {
    get: (target, key) => {
      if (key === 'cas') return cas;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...ports, verbs };
}

/**
 * P holds lock 0. C enqueues on lock 0, but its CAS's answer is lost, so its acquire fails although
 * C's descriptor is now lock 0's tail. C then takes lock 1 with the same descriptor. W enqueues on
 * lock 0 behind C's descriptor and links into it; C releases lock 1, then P releases lock 0.
 */
async function scenario(options: ProtocolOptions) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 4, entryBytes: ENTRY_BYTES, computeNodes: 2, jitterNs: 0 });
  const [n1, n2] = cluster.computeNodeIds as [number, number];
  const history = new HistoryRecorder();
  const now = () => cluster.clock.nowNs();
  const opts = { releaseLinkTimeoutNs: 100_000, ...options };
  const client = (ports: ClientPorts) => {
    const lock = alock.createClient(ports, opts) as LockClient<Grant>;
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
  const c = client(losingFirstCas(cluster.clientPorts({ node: n2, client: 1 })));
  const w = client(cluster.clientPorts({ node: n1, client: 2 }));
  const sleep = (ns: number) => cluster.clock.sleep(ns);
  const outcome = { cFailed: false, wGranted: false, lock0Again: false, lock1Again: false };
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
    const again1 = await p.acquire(1, 'exclusive', 2);
    outcome.lock1Again = again1 !== undefined;
    if (again1) await p.release(again1);
    const again0 = await p.acquire(0, 'exclusive', 2);
    outcome.lock0Again = again0 !== undefined;
    if (again0) await p.release(again0);
  })();
  await scheduler.run({ maxEvents: 500_000 });
  await run;
  return { outcome, verdict: checkHistory(history) };
}

describe('alock: an enqueue CAS whose answer was lost (flushed queue pair)', () => {
  it('the writer linked behind the lost descriptor is never handed a lock it does not own; both locks are free again', async () => {
    const { outcome, verdict } = await scenario({});
    expect(outcome.cFailed).toBe(true);
    expect(verdict.violations).toEqual([]);
    expect(outcome.wGranted).toBe(false);
    expect(outcome).toMatchObject({ lock0Again: true, lock1Again: true });
  });

  it('mutant: the descriptor reused under the same generation hands lock 0 to the client behind the lost enqueue, beside its holder', async () => {
    const { outcome, verdict } = await scenario({ mutantReuseAfterFailedSwap: true });
    expect(outcome.wGranted).toBe(true);
    expect(verdict.violations.map((v) => v.lock)).toEqual([0]);
  });
});
