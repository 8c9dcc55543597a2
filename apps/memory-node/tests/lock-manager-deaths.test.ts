import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { MailboxHub, MalformedInputCounter, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { protocolById } from '@lockfabric/lock-catalog';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { noopTrace } from '@lockfabric/ports';
import type { ClientPorts, Grant, LockClient, NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { SeededRandom } from '@lockfabric/sim';
import { startNatsServer, waitFor } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { FailureNoticeSchema, MemberState, MembershipViewSchema } from '@lockfabric/wire';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryNodeExecutor } from '../src/memory-executor.js';
import { startNodeServices } from '../src/node-services.js';
import type { NodeServices } from '../src/node-services.js';

// The memory node's lock managers (rpc, traditional) hear of a compute node's death through the
// node's own fence feed (a FailureNotice over a real NATS server here) and drop the dead node's
// holds and queued requests, as a lock server does on sim. No outcome waits on a clock: "not
// granted" is read from reply order. One server thread with no modelled CPU time serves requests
// in arrival order, and every message here goes over one NATS connection, so a reply a request
// caused reaches its client before the reply to any request sent after it.

const MEMORY: NodeId = 0;
const SURVIVOR: NodeId = 1;
const VICTIM: NodeId = 2;
const LOCKS = 16;
const PROTOCOL = 'traditional';
/** Never decides an outcome here: the test's own timeout bounds a hang. */
const NO_TIMEOUT_MS = 600_000;
const clock = new RealClock();

/** Lets the messages already received, and the microtasks they start, run. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether an acquire has been granted yet, without waiting for it. */
function pending(acquire: Promise<Grant>): { granted: () => boolean } {
  let granted = false;
  acquire.then(
    () => (granted = true),
    () => undefined,
  );
  return { granted: () => granted };
}

/** A memory node's services and recovery watch over a real NATS server, and lock clients of two compute nodes. */
class Rig {
  private readonly hubs = new Map<NodeId, MailboxHub>();
  private readonly executor = new MemoryNodeExecutor({ node: MEMORY, lockCount: LOCKS, entryBytes: 8, lockTableBytes: LOCKS * 8 }, clock);
  private readonly subjects;
  private readonly node: NodeServices;
  /** Ends the acquires still waiting when the rig closes (the victim's, and the mutant's survivors). */
  private readonly stopper = new AbortController();
  private clients = 0;

  constructor(
    private readonly nc: NatsConnection,
    name: string,
    options: ProtocolOptions,
  ) {
    this.subjects = createSubjects(name);
    const malformed = new MalformedInputCounter({ logger: silentLogger });
    this.node = startNodeServices({ nc, subjects: this.subjects, node: MEMORY, executor: this.executor, mailboxes: this.hub(MEMORY), clock, trace: noopTrace, logger: silentLogger, malformed, lockTableBytes: LOCKS * 8, serviceOptions: { [PROTOCOL]: { cpuNs: 0, ...options } } });
  }

  private hub(node: NodeId): MailboxHub {
    let hub = this.hubs.get(node);
    if (!hub) this.hubs.set(node, (hub = new MailboxHub({ nc: this.nc, subjects: this.subjects, node, logger: silentLogger })));
    return hub;
  }

  /** An exclusive acquire of `lock` by a new client of `node` in the run of epoch `runEpoch`. */
  acquire(node: NodeId, runEpoch: number, lock: number): Promise<Grant> {
    return this.client(node, runEpoch).acquire(lock, 'exclusive', { timeoutMs: NO_TIMEOUT_MS, signal: this.stopper.signal });
  }

  /** A new lock client on `node` in the run of epoch `runEpoch` (each has its own client index). */
  client(node: NodeId, runEpoch: number): LockClient {
    const index = this.clients++;
    const region = this.executor.memory.regions().find((r) => r.region === 0)!;
    const ports = {
      self: { node, client: index },
      mailbox: this.hub(node).mailbox(index),
      clock,
      random: new SeededRandom(index + 1),
      trace: noopTrace,
      locks: { memoryNodes: [{ node: MEMORY, region: 0, rkey: region.rkey, baseOffset: 0 }], entryBytes: 8, lockCount: LOCKS },
    } as unknown as ClientPorts;
    return protocolById(PROTOCOL).createClient(ports, { runEpoch });
  }

  /**
   * A request sent now that is answered at once (a free lock): once its grant is back, the server
   * has handled every request sent before it and its replies to them have been delivered.
   */
  async sync(lock: number, runEpoch = 1): Promise<void> {
    await this.acquire(SURVIVOR, runEpoch, lock);
    await drain();
  }

  /** Declares `node` dead as the coordinator does, and waits until this memory node has fenced it. */
  async kill(node: NodeId): Promise<void> {
    const notice = create(FailureNoticeSchema, { epoch: 7n, role: 'compute', id: String(node), node, incarnation: 1n, reason: 'missed heartbeats' });
    this.nc.publish(this.subjects.recovery('failure'), toBinary(FailureNoticeSchema, notice));
    await waitFor(() => this.executor.fences.fenceOf(node), { what: `compute node ${node} fenced`, timeoutMs: 60_000 });
  }

  /** A view listing `node` alive with a new incarnation: it restarted. */
  async restart(node: NodeId): Promise<void> {
    const members = [SURVIVOR, node].map((n) => ({ role: 'compute', id: String(n), node: n, incarnation: n === node ? 2n : 1n, state: MemberState.ALIVE }));
    this.nc.publish(this.subjects.membership(), toBinary(MembershipViewSchema, create(MembershipViewSchema, { epoch: 8n, members })));
    await waitFor(() => this.executor.fences.fenceOf(node) === undefined, { what: `compute node ${node} admitted again`, timeoutMs: 60_000 });
  }

  async close(): Promise<void> {
    this.stopper.abort();
    await this.node.stop();
    for (const hub of this.hubs.values()) await hub.close();
  }
}

/**
 * Run 1: the victim holds lock 1 with a survivor queued behind it, and is queued for lock 2 behind
 * a survivor's hold. The victim dies; a late ACQUIRE of lock 3 from it arrives after the fence.
 * Then the survivor releases lock 2 and survivors ask for locks 2 and 3. Returns which survivors
 * hold what once every reply to those requests has been delivered.
 */
async function victimDies(rig: Rig) {
  await rig.acquire(VICTIM, 1, 1);
  const holder2 = rig.client(SURVIVOR, 1);
  const hold2 = await holder2.acquire(2, 'exclusive', { timeoutMs: NO_TIMEOUT_MS });
  const waiter1 = pending(rig.acquire(SURVIVOR, 1, 1));
  pending(rig.acquire(VICTIM, 1, 2));
  await rig.sync(8);
  const queuedBeforeDeath = waiter1.granted();
  await rig.kill(VICTIM);
  pending(rig.acquire(VICTIM, 1, 3));
  await holder2.release(hold2);
  const next2 = pending(rig.acquire(SURVIVOR, 1, 2));
  const next3 = pending(rig.acquire(SURVIVOR, 1, 3));
  await rig.sync(9);
  return { queuedBeforeDeath, lock1: waiter1.granted(), lock2: next2.granted(), lock3: next3.granted() };
}

describe('memory node: its lock managers drop a dead compute node’s holds on the fence', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let rig: Rig | undefined;
  let rigs = 0;
  const newRig = (options: ProtocolOptions = {}) => (rig = new Rig(nc, `mgrdeaths${++rigs}`, options));

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'lock-manager-deaths-test', logger: silentLogger });
  });
  afterEach(async () => {
    await rig?.close();
    rig = undefined;
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('a FailureNotice frees what the dead node held, drops what it waited for, and ignores its late requests', async () => {
    const seen = await victimDies(newRig());
    expect(seen).toStrictEqual({ queuedBeforeDeath: false, lock1: true, lock2: true, lock3: true });
  }, 120_000);

  it('mutant mutantKeepDeadHolds (the memory node before: no drop) is caught: the dead node keeps lock 1 and takes lock 2', async () => {
    const seen = await victimDies(newRig({ mutantKeepDeadHolds: true }));
    expect(seen).toStrictEqual({ queuedBeforeDeath: false, lock1: false, lock2: false, lock3: true });
  }, 120_000);

  it('the restarted node (a new incarnation) takes part in the next run again', async () => {
    const r = newRig();
    await r.acquire(VICTIM, 1, 1);
    await r.kill(VICTIM);
    await r.restart(VICTIM);
    // the next run's requests carry its epoch: the restarted node is served, and gets lock 1
    const again = await r.acquire(VICTIM, 2, 1);
    expect(again.lock).toBe(1);
  }, 120_000);
});
