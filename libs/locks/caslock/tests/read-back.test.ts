import { HistoryRecorder, checkHistory } from '@lockfabric/check';
import { FabricAccessError, clientKey } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient, LockMode } from '@lockfabric/ports';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { createSimCluster } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { caslock } from '../src/index.js';

/** The first CAS runs on the memory node, then fails `unreachable`, as a flushed queue pair's does. */
function losingFirstCas(ports: ClientPorts): ClientPorts {
  let lost = false;
  const inner = ports.verbs;
  const cas = async (...args: Parameters<ClientPorts['verbs']['cas']>) => {
    const old = await inner.cas(...args);
    if (lost) return old;
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
 * A's acquire CAS on lock 0 runs but its answer is lost, so A starts a read-back and tries again
 * at once; its CAS finds its own tag and holds the lock. B then tries for 50 µs while A holds,
 * then A releases. Every step goes into one history.
 */
async function scenario(options: ProtocolOptions) {
  const { cluster, scheduler } = createSimCluster({ seed: 1, lockCount: 2, entryBytes: caslock.entryBytes, computeNodes: 2 });
  const [n1, n2] = cluster.computeNodeIds as [number, number];
  const history = new HistoryRecorder();
  const now = () => cluster.clock.nowNs();
  const client = (ports: ClientPorts) => {
    const lock = caslock.createClient(ports, options) as LockClient<Grant>;
    const key = clientKey(ports.self);
    return {
      async acquire(mode: LockMode, timeoutMs: number) {
        history.invoke(key, 'acquire', 0, mode, now());
        try {
          const grant = await lock.acquire(0, mode, { timeoutMs });
          history.ok(key, 'acquire', 0, mode, now());
          return grant;
        } catch (error) {
          history.fail(key, 'acquire', 0, mode, now(), (error as Error).name);
          return undefined;
        }
      },
      async release(grant: Grant) {
        history.invoke(key, 'release', 0, grant.mode, now());
        await lock.release(grant);
        history.ok(key, 'release', 0, grant.mode, now());
      },
    };
  };
  const a = client(losingFirstCas(cluster.clientPorts({ node: n1, client: 0 })));
  const b = client(cluster.clientPorts({ node: n2, client: 0 }));
  const outcome = { firstFailed: false, aHeld: false, bGotItWhileAHeld: false, freeAfterwards: false };
  const run = (async () => {
    outcome.firstFailed = (await a.acquire('exclusive', 1)) === undefined;
    const held = await a.acquire('exclusive', 1);
    outcome.aHeld = held !== undefined;
    const other = await b.acquire('exclusive', 0.05);
    outcome.bGotItWhileAHeld = other !== undefined;
    if (other) await b.release(other);
    if (held) await a.release(held);
    const again = await b.acquire('exclusive', 1);
    outcome.freeAfterwards = again !== undefined;
    if (again) await b.release(again);
  })();
  await scheduler.run({ maxEvents: 200_000 });
  await run;
  return { outcome, verdict: checkHistory(history) };
}

describe('caslock: read-back after a lost CAS answer', () => {
  it('the retry finds its own tag and holds the lock; the read-back it took over frees nothing', async () => {
    const { outcome, verdict } = await scenario({});
    expect(outcome).toEqual({ firstFailed: true, aHeld: true, bGotItWhileAHeld: false, freeAfterwards: true });
    expect(verdict.violations).toEqual([]);
  });

  it('mutant: a read-back left running frees the hold the retry just made, and B gets the lock beside A', async () => {
    const { outcome, verdict } = await scenario({ mutantNoTakeOver: true });
    expect(outcome.bGotItWhileAHeld).toBe(true);
    expect(verdict.violations.map((v) => v.lock)).toEqual([0]);
  });
});
