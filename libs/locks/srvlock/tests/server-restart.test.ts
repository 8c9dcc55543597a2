import { describe, expect, it } from 'vitest';
import { SERVICE_CLIENT } from '@lockfabric/locks-common';
import { TableLostError, noopTrace } from '@lockfabric/ports';
import type { ClientAddress, ClientPorts, NodeId, TableBinding } from '@lockfabric/ports';
import { InMemoryMailboxHub, SchedulerClock, VirtualScheduler } from '@lockfabric/sim';
import { LocalOp, LockServer, ServerLockClient, encodeReply, modeCode } from '../src/index.js';
import type { ServerGrant } from '../src/index.js';

// The memory node's lock manager (rpc, traditional) restarts with its node: an empty table and rid
// map under a new incarnation, which its replies carry. Scripted here; swarm seeds in the rpc and
// traditional tests.

const MEMORY = 0;
const A: ClientAddress = { node: 1, client: 0 };
const B: ClientAddress = { node: 2, client: 0 };
const SERVICE: ClientAddress = { node: MEMORY, client: SERVICE_CLIENT };

function rig(options: { ignoreRestart?: boolean; forgetDead?: boolean; perRunServer?: boolean } = {}) {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const hub = new InMemoryMailboxHub(scheduler, { latencyNs: 1_000, jitterNs: 0, queueBound: 1_024, random: { next: () => 0 } });
  const ports = (self: ClientAddress, tables?: TableBinding) => ({ self, mailbox: hub.mailbox(self), clock, trace: noopTrace, ...(tables ? { tables } : {}) }) as unknown as ClientPorts;
  const start = (incarnation: number, declared: NodeId[] = []) =>
    new LockServer(
      { ports: ports(SERVICE), memoryNodes: [MEMORY], computeNodes: [], failures: { onComputeNodeFailed: () => () => undefined, declared } },
      { managesLocks: true, incarnation, fenceDeclaredAtStart: options.perRunServer !== true, mutantForgetDeadOnStart: options.forgetDead === true },
    );
  const client = (self: ClientAddress, tables?: TableBinding) =>
    new ServerLockClient(ports(self, tables), {
      protocol: 'traditional',
      retransmitNs: 50_000,
      retransmitAcquire: true,
      maxAttempts: 3,
      pushBackNs: 0,
      needsTopology: false,
      serverIncarnations: options.ignoreRestart !== true,
      route: () => ({ kind: 'local', node: MEMORY }),
    });
  /** Runs the scheduler until `work` settles (the server's receive loop alone never ends it). */
  const settle = async <T>(work: Promise<T>): Promise<T | Error> => {
    const outcome = work.catch((error: unknown) => error as Error);
    await scheduler.run();
    return outcome;
  };
  /** A grant for `to`'s rid sent by a server of `incarnation` (one that was delayed past a restart). */
  const lateGrant = (to: ClientAddress, lock: number, rid: number, incarnation: number) =>
    hub.mailbox(SERVICE).send({ kind: 'grant', to, lock, value: BigInt(rid), data: encodeReply(LocalOp.grant, incarnation) });
  return { start, client, settle, lateGrant, hub, scheduler };
}

async function holdAcrossRestart(options: { ignoreRestart?: boolean } = {}) {
  const r = rig(options);
  const first = r.start(1);
  const a = r.client(A);
  const held = (await r.settle(a.acquire(5, 'exclusive', { timeoutMs: 1 }))) as ServerGrant;
  first.stop();
  const second = r.start(2);
  const other = await r.settle(r.client(B).acquire(5, 'exclusive', { timeoutMs: 1 }));
  const released = await r.settle(a.release(held));
  return { held, second, other, released };
}

describe('LockServer: a memory node restarts its lock manager empty', () => {
  it('a hold of the lost table ends TABLE_LOST on release; the new server granted the lock afresh', async () => {
    const { held, other, released, second } = await holdAcrossRestart();
    expect(held.incarnation).toBe(1);
    expect((other as ServerGrant).incarnation).toBe(2);
    expect(released).toBeInstanceOf(TableLostError);
    expect(second.table.holders(5).map((h) => h.machine)).toEqual([B.node]);
  });

  it('mutant mutantIgnoreServerRestart: the release looks fine, so the two holds overlap unseen', async () => {
    const { released, other } = await holdAcrossRestart({ ignoreRestart: true });
    expect(other).not.toBeInstanceOf(Error);
    expect(released).toBeUndefined();
  });

  it.each([false, true])('a grant of the lost table arriving after the client heard the new server is refused (mutant %s)', async (ignoreRestart) => {
    const r = rig({ ignoreRestart });
    r.start(2);
    const a = r.client(A);
    // A has heard incarnation 2 (one acquire and release); its next acquire (rid 2) waits on lock 7, held by B
    const first = (await r.settle(a.acquire(3, 'exclusive', { timeoutMs: 1 }))) as ServerGrant;
    await r.settle(a.release(first));
    await r.settle(r.client(B).acquire(7, 'exclusive', { timeoutMs: 1 }));
    const waiting = a.acquire(7, 'exclusive', { timeoutMs: 1 });
    r.lateGrant(A, 7, 2, 1);
    const outcome = await r.settle(waiting);
    if (ignoreRestart) expect((outcome as ServerGrant).incarnation).toBeUndefined();
    else expect(outcome).toBeInstanceOf(TableLostError);
  });

  it('a client whose tables say the memory node restarted refuses a grant of the old incarnation, not one of the new', async () => {
    const r = rig();
    const old = r.start(1);
    // pinned to incarnation 1 at the acquire's start; the node has restarted since
    const tables: TableBinding = { follow: () => undefined, lost: () => true, settle: async () => true, incarnations: () => new Map([[MEMORY, 1]]) };
    const a = r.client(A, tables);
    // lock 9 is free: the (old) server grants it with incarnation 1, which the binding says is lost
    expect(await r.settle(a.acquire(9, 'exclusive', { timeoutMs: 1 }))).toBeInstanceOf(TableLostError);
    old.stop();
    r.start(2);
    const fresh = await r.settle(a.acquire(9, 'shared', { timeoutMs: 1 }));
    expect((fresh as ServerGrant).incarnation).toBe(2);
  });

  it.each([false, true])('a restarted server fences the nodes declared dead before it started (mutantForgetDeadOnStart %s)', async (forgetDead) => {
    const r = rig({ forgetDead });
    const server = r.start(2, [B.node]);
    // B's request was waiting in the memory node's inbox when B was declared dead
    r.hub.mailbox(B).send({ kind: 'custom', to: SERVICE, lock: 4, value: 1n, data: Uint8Array.of(LocalOp.acquire, modeCode('exclusive')) });
    await r.scheduler.run();
    expect(server.table.holders(4).map((h) => h.machine)).toEqual(forgetDead ? [B.node] : []);
    expect(server.counters.fenced).toBe(forgetDead ? 0 : 1);
  });

  it('a server a compute node builds for a run does not fence nodes declared in earlier runs (they may have rejoined)', async () => {
    const r = rig({ perRunServer: true });
    const server = r.start(0, [B.node]);
    r.hub.mailbox(B).send({ kind: 'custom', to: SERVICE, lock: 4, value: 1n, data: Uint8Array.of(LocalOp.acquire, modeCode('exclusive')) });
    await r.scheduler.run();
    expect(server.table.holders(4).map((h) => h.machine)).toEqual([B.node]);
    expect(server.counters.fenced).toBe(0);
  });
});
