import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { Nic, NodeMemory, registerDescriptorRegion } from '@lockfabric/fabric';
import { MalformedInputCounter, MemoryQueuePair, connectNats, createSubjects, followFences, silentLogger, startMemoryServer } from '@lockfabric/live';
import type { FenceFeed, MemoryServer } from '@lockfabric/live';
import type { RemoteAddr, WorkRequest } from '@lockfabric/ports';
import { startNatsServer, waitFor } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { FailureNoticeSchema, MemberState, MembershipViewSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorMemoryExecutor } from '../src/descriptor-executor.js';

const SELF = 1;
const subjects = createSubjects('descfence');

const view = (epoch: bigint, members: [node: number, incarnation: bigint, state: MemberState][]) =>
  toBinary(MembershipViewSchema, create(MembershipViewSchema, { epoch, members: members.map(([node, incarnation, state]) => ({ role: 'compute', id: String(node), node, incarnation, state })) }));
const failure = (node: number, incarnation: bigint, epoch: bigint) =>
  toBinary(FailureNoticeSchema, create(FailureNoticeSchema, { epoch, role: 'compute', id: String(node), node, incarnation, reason: 'missed heartbeats' }));

/**
 * A compute node's memory server (its clients' queue nodes) behind the shared fence: peers 2 and 3
 * write grants over real gRPC queue pairs while views and notices arrive over a real NATS server.
 */
describe("compute node's memory server fences dead compute nodes", () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let feed: FenceFeed;
  let server: MemoryServer;
  let executor: DescriptorMemoryExecutor;
  let nic: Nic;
  let slot: RemoteAddr;
  const queuePairs: MemoryQueuePair[] = [];
  const malformed = new MalformedInputCounter({ logger: silentLogger });

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'descriptor-fencing-test', logger: silentLogger });
    const memory = new NodeMemory(SELF);
    registerDescriptorRegion(memory, false);
    nic = new Nic(memory);
    executor = new DescriptorMemoryExecutor(SELF, memory, nic);
    const region = memory.regions()[0]!;
    slot = { node: SELF, region: region.region, rkey: region.rkey, offset: 0 };
    feed = followFences({ nc, subjects, fences: executor.fences, malformed, logger: silentLogger });
    server = await startMemoryServer({ executor, host: '127.0.0.1', logger: silentLogger });
    for (const peer of [2, 3]) queuePairs.push(await MemoryQueuePair.connect(server.address, peer, { logger: silentLogger }));
    await nc.flush();
  });
  afterAll(async () => {
    for (const qp of queuePairs) qp.close();
    server?.kill();
    feed?.stop();
    await nc?.close();
    await nats?.stop();
  });

  const grant = (value: number, offset = 0): WorkRequest => ({ op: 'write', addr: { ...slot, offset }, data: Uint8Array.of(value) });
  const byteAt = (offset: number) => nic.executeBatch([{ op: 'read', addr: { ...slot, offset }, length: 1 }], SELF)[0]?.data?.[0];
  const [peer2, peer3] = [() => queuePairs[0]!, () => queuePairs[1]!];

  it('serves every peer while all are alive', async () => {
    nc.publish(subjects.membership(), view(5n, [[SELF, 1n, MemberState.ALIVE], [2, 1n, MemberState.ALIVE], [3, 1n, MemberState.ALIVE]]));
    await waitFor(() => executor.fences.currentEpoch === 5n, { what: 'view 5 applied' });
    expect((await peer2().post([grant(7)]))[0]?.status).toBe('ok');
    expect(byteAt(0)).toBe(7);
  });

  it("refuses a declared-dead node's late grant with the memory node's typed status; serves the others", async () => {
    nc.publish(subjects.recovery('failure'), failure(2, 1n, 6n));
    await waitFor(() => executor.fences.fenceOf(2), { what: 'node 2 fenced' });
    const refused = await peer2().post([grant(9), grant(9, 8)]);
    expect(refused.map((c) => c.status)).toStrictEqual(['bad-rkey', 'bad-rkey']);
    expect(refused[0]?.detail).toMatch(/^fenced: compute node 2 \(incarnation 1\) was declared dead in epoch 6/);
    // The stale grant never reached the queue node.
    expect([byteAt(0), byteAt(8)]).toStrictEqual([7, 0]);
    expect(executor.fencedCount).toBe(2);
    expect((await peer3().post([grant(3, 16)]))[0]?.status).toBe('ok');
    expect(byteAt(16)).toBe(3);
    // A view that still lists the resumed node with its old incarnation does not lift the fence.
    nc.publish(subjects.membership(), view(7n, [[SELF, 1n, MemberState.ALIVE], [2, 1n, MemberState.ALIVE], [3, 1n, MemberState.ALIVE]]));
    await waitFor(() => executor.fences.currentEpoch === 7n, { what: 'view 7 applied' });
    expect((await peer2().post([grant(9)]))[0]?.status).toBe('bad-rkey');
  });

  it('never fences its own node, and counts undecodable views', async () => {
    nc.publish(subjects.membership(), Uint8Array.of(0xff, 0xff, 0xff));
    nc.publish(subjects.recovery('failure'), failure(SELF, 1n, 8n));
    await waitFor(() => executor.fences.currentEpoch === 8n, { what: 'notice 8 applied' });
    expect(executor.fences.fenceOf(SELF)).toBeUndefined();
    expect(malformed.count(subjects.membership())).toBe(1);
  });

  it("serves the node's new incarnation again once a view admits it", async () => {
    nc.publish(subjects.membership(), view(9n, [[SELF, 1n, MemberState.ALIVE], [2, 2n, MemberState.ALIVE], [3, 1n, MemberState.ALIVE]]));
    await waitFor(() => executor.fences.fenceOf(2) === undefined, { what: 'node 2 admitted' });
    expect((await peer2().post([grant(11)]))[0]?.status).toBe('ok');
    expect(byteAt(0)).toBe(11);
  });
});
