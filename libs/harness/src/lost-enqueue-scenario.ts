import { HistoryRecorder, checkHistory, recordedClient } from '@lockfabric/check';
import type { Verdict } from '@lockfabric/check';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import { FabricAccessError, clientKey } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient, LockId, LockMode } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';

type Verbs = ClientPorts['verbs'];

/**
 * Ports whose first `verb` that `ran(args, old)` approves runs on the memory node, then fails
 * `unreachable`: live, a queue pair whose stream breaks fails every outstanding request that way
 * whether the memory node ran it or not (as a real RDMA QP flushes its work requests). The sim
 * never loses a completion, so scripted scenarios lose one with this.
 */
export function losingFirstCompletion<V extends 'cas' | 'maskedCas'>(
  ports: ClientPorts,
  verb: V,
  ran: (args: Parameters<Verbs[V]>, old: bigint) => boolean = () => true,
): ClientPorts {
  let lost = false;
  const inner = ports.verbs;
  const lossy = async (...args: Parameters<Verbs[V]>): Promise<bigint> => {
    const old = await (inner[verb] as (...a: Parameters<Verbs[V]>) => Promise<bigint>)(...args);
    if (lost || !ran(args, old)) return old;
    lost = true;
    throw new FabricAccessError('unreachable', `queue pair flushed after the ${verb} ran (scripted)`);
  };
  const verbs = new Proxy(inner, {
    get: (target, key) => {
      if (key === verb) return lossy;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...ports, verbs };
}

export interface LostEnqueueSetup {
  readonly protocol: ProtocolDefinition;
  readonly options: ProtocolOptions;
  /** Wraps C's ports so that its enqueue on lock 0 runs but its completion is lost. */
  readonly loseEnqueue: (ports: ClientPorts) => ClientPorts;
  /** The mode P asks lock 1 in afterwards (a reader-writer lock can show a stuck writer phase). */
  readonly lock1AgainMode: LockMode;
  readonly jitterNs?: number;
  readonly maxEvents: number;
}

export interface LostEnqueueOutcome {
  readonly outcome: { cFailed: boolean; wGranted: boolean; lock1Again: boolean; lock0Again: boolean };
  readonly verdict: Verdict;
}

/**
 * A queue lock whose enqueue's completion is lost, in one recorded history: writer P holds lock 0.
 * C enqueues on lock 0, but the completion is lost, so its acquire fails although C's queue node
 * is now lock 0's tail. C then takes lock 1 with the same node. W enqueues on lock 0 behind C's
 * node and links into it; C releases lock 1, then P releases lock 0. Afterwards P takes both locks
 * again. A correct protocol never hands lock 0 to W beside P, and frees both locks.
 */
export async function lostEnqueueScenario(setup: LostEnqueueSetup): Promise<LostEnqueueOutcome> {
  const { cluster, scheduler } = createSimCluster({
    seed: 1,
    lockCount: 4,
    entryBytes: setup.protocol.entryBytes,
    computeNodes: 2,
    ...(setup.jitterNs !== undefined ? { jitterNs: setup.jitterNs } : {}),
  });
  const [n1, n2] = cluster.computeNodeIds as [number, number];
  const history = new HistoryRecorder();
  const now = () => cluster.clock.nowNs();
  const opts = { releaseLinkTimeoutNs: 100_000, ...setup.options };
  const client = (ports: ClientPorts) => {
    const recorded = recordedClient(setup.protocol.createClient(ports, opts) as LockClient<Grant>, clientKey(ports.self), history, now);
    return {
      acquire: (id: LockId, mode: LockMode, timeoutMs = 20) => recorded.acquire(id, mode, timeoutMs).catch(() => undefined),
      release: (grant: Grant) => recorded.release(grant),
    };
  };
  const p = client(cluster.clientPorts({ node: n1, client: 0 }));
  const c = client(setup.loseEnqueue(cluster.clientPorts({ node: n2, client: 1 })));
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
    const again1 = await p.acquire(1, setup.lock1AgainMode, 2);
    outcome.lock1Again = again1 !== undefined;
    if (again1) await p.release(again1);
    const again0 = await p.acquire(0, 'exclusive', 2);
    outcome.lock0Again = again0 !== undefined;
    if (again0) await p.release(again0);
  })();
  await scheduler.run({ maxEvents: setup.maxEvents });
  await run;
  return { outcome, verdict: checkHistory(history) };
}
