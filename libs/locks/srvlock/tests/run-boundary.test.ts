import { describe, expect, it } from 'vitest';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import { LockTimeoutError, noopTrace } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, LockMode } from '@lockfabric/ports';
import { InMemoryMailboxHub, SchedulerClock, VirtualScheduler } from '@lockfabric/sim';
import { LocalOp, LockServer, ServerLockClient, modeCode } from '../src/index.js';
import type { ServerGrant } from '../src/index.js';

// The two-sided baselines' server lives in a live memory node across runs; each run's clients
// restart their request ids at 1 and stamp their run's epoch. These runs share one server.

const MEMORY = 0;
const CLIENT: ClientAddress = { node: 1, client: 0 };
const PEER: ClientAddress = { node: 1, client: 1 };
const SERVICE: ClientAddress = { node: MEMORY, client: SERVICE_CLIENT };

function rig(mutantNoRunBoundary: boolean) {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const hub = new InMemoryMailboxHub(scheduler, { latencyNs: 1_000, jitterNs: 0, queueBound: 1_024, random: { next: () => 0 } });
  const ports = (self: ClientAddress) => ({ self, mailbox: hub.mailbox(self), clock, trace: noopTrace }) as unknown as ClientPorts;
  const server = new LockServer({ ports: ports(SERVICE), memoryNodes: [MEMORY], computeNodes: [] }, { managesLocks: true, mutantNoRunBoundary });
  const client = (self: ClientAddress, runEpoch: number) =>
    new ServerLockClient(ports(self), { protocol: 'traditional', retransmitNs: 50_000, retransmitAcquire: true, maxAttempts: 3, pushBackNs: 0, needsTopology: false, runEpoch, route: () => ({ kind: 'local', node: MEMORY }) });
  /** Runs the scheduler until `work` settles (the server's receive loop alone never ends it). */
  const settle = async <T>(work: Promise<T>): Promise<T | Error> => {
    const outcome = work.catch((error: unknown) => error as Error);
    await scheduler.run();
    return outcome;
  };
  /** A request of run `run` from CLIENT, as a late retransmit or cancel of that run would arrive. */
  const late = (run: number, op: number, lock: number, rid: number, mode: LockMode = 'exclusive') =>
    hub.mailbox(CLIENT).send({ kind: 'custom', to: SERVICE, lock, value: BigInt(rid), epoch: BigInt(run), data: Uint8Array.of(op, modeCode(mode)) });
  const holders = (lock: number) => server.table.holders(lock).map((r) => `${r.machine}/${r.task}/${r.rid}@${r.run ?? 0}`);
  return { server, client, settle, late, holders, hub, scheduler };
}

/** Run 1 acquires and releases lock 5, then leaves lock 7 held (aborted mid-way); run 2's client of the same index starts at rid 1. */
async function twoRuns(mutantNoRunBoundary: boolean) {
  const r = rig(mutantNoRunBoundary);
  const run1 = r.client(CLIENT, 1);
  const first = await r.settle(run1.acquire(5, 'exclusive', { timeoutMs: 1 }));
  if (first instanceof Error) throw first;
  await r.settle(run1.release(first));
  await r.settle(run1.acquire(7, 'exclusive', { timeoutMs: 1 }));
  const run2 = r.client(CLIENT, 2);
  const onLeftover = await r.settle(run2.acquire(7, 'exclusive', { timeoutMs: 1 }));
  const again = await r.settle(run2.acquire(5, 'shared', { timeoutMs: 1 }));
  return { r, run2, onLeftover, again };
}

describe('LockServer: a run boundary for a server that outlives runs', () => {
  it('two runs back to back, rids restarting at 1: both are granted, the aborted run’s hold is gone', async () => {
    const { r, onLeftover, again } = await twoRuns(false);
    expect(onLeftover).not.toBeInstanceOf(Error);
    expect((onLeftover as ServerGrant).rid).toBe(1);
    expect(again).not.toBeInstanceOf(Error);
    expect(r.holders(7)).toEqual(['1/0/1@2']);
    expect(r.server.counters).toMatchObject({ runs: 2, droppedOldRun: 1, oldRunRequests: 0 });
  });

  it('a late request of run 1 in run 2 grants, releases and fences nothing', async () => {
    const { r, run2 } = await twoRuns(false);
    // run 2 holds lock 7 as rid 1 and lock 5 as rid 2; run 1 used the same task and rids
    r.late(1, LocalOp.release, 7, 1);
    r.late(1, LocalOp.acquire, 9, 40);
    r.late(1, LocalOp.cancel, 11, 500);
    await r.scheduler.run();
    expect(r.holders(7)).toEqual(['1/0/1@2']);
    expect(r.holders(9)).toEqual([]);
    expect(r.server.counters.oldRunRequests).toBe(3);
    // a run-1 cancel of rid 500 would have made run 2's rids up to 500 stale
    const next = await r.settle(run2.acquire(11, 'exclusive', { timeoutMs: 1 }));
    expect(next).not.toBeInstanceOf(Error);
  });

  it('a client takes no reply of another run for its own', async () => {
    const { r } = await twoRuns(false);
    // PEER of run 2 waits behind run 2's hold of lock 7; a forged run-1 grant for its rid comes first
    const peer = r.client(PEER, 2);
    const waiting = peer.acquire(7, 'exclusive', { timeoutMs: 1 });
    r.hub.mailbox(SERVICE).send({ kind: 'grant', to: PEER, lock: 7, value: 1n, epoch: 1n, data: Uint8Array.of(LocalOp.grant) });
    expect(await r.settle(waiting)).toBeInstanceOf(LockTimeoutError);
  });

  it('mutant mutantNoRunBoundary (the old server): run 2’s restarted rids look stale and time out', async () => {
    const { r, onLeftover, again } = await twoRuns(true);
    expect(onLeftover).toBeInstanceOf(LockTimeoutError);
    expect(again).toBeInstanceOf(LockTimeoutError);
    expect(r.server.counters.runs).toBe(0);
  });
});
