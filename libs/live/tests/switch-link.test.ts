import type { NatsConnection } from '@nats-io/transport-node';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { connectNats } from '../src/nats-connect.js';
import { createSubjects } from '../src/subjects.js';
import { SwitchIngress, SwitchLink } from '../src/switch-link.js';
import { memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('switch-test');
const trace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

let nats: NatsServerHandle;
let ncSwitch: NatsConnection;
let ncNodes: NatsConnection;
let ingress: SwitchIngress;
let link1: SwitchLink;
let link2: SwitchLink;
const ingressMalformed = new MalformedInputCounter({ logger: memoryLogger() });
const seenBySwitch: { packet: LockPacket; from: NodeId }[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncSwitch = await connectNats({ servers: nats.url, name: 'switch', logger: memoryLogger() });
  ncNodes = await connectNats({ servers: nats.url, name: 'nodes', logger: memoryLogger() });
  // A forwarding "program": every packet goes to its dst with the switch as the sender machine.
  ingress = new SwitchIngress({
    nc: ncSwitch,
    subjects,
    rack: 0,
    logger: memoryLogger(),
    malformed: ingressMalformed,
    onPacket: (packet, from) => {
      seenBySwitch.push({ packet, from });
      if (packet.dst !== undefined) ingress.egress(packet.dst, { ...packet, type: 'grant' });
    },
  });
  link1 = new SwitchLink({ nc: ncNodes, subjects, machine: 1, rack: 0, logger: memoryLogger() });
  link2 = new SwitchLink({ nc: ncNodes, subjects, machine: 2, rack: 0, logger: memoryLogger() });
  await Promise.all([ncSwitch.flush(), ncNodes.flush()]);
});

afterAll(async () => {
  ingress?.close();
  link1?.close();
  link2?.close();
  await ncSwitch?.close();
  await ncNodes?.close();
  await nats?.stop();
});

const acquire = (lock: number, dst: NodeId): LockPacket => ({
  type: 'acquire',
  lock,
  machine: 1,
  task: 3,
  mode: 'exclusive',
  incarnation: 1,
  seq: lock,
  flags: 0,
  dst,
});

describe('SwitchLink and SwitchIngress', () => {
  it('round-trip a packet through the switch to another machine', async () => {
    const arrived: LockPacket[] = [];
    const off = link2.onPacket((packet) => arrived.push(packet));
    link1.send({ ...acquire(5, 2), agent: 4, trace });
    await waitFor(() => arrived.length === 1, { what: 'the grant at machine 2' });
    off();
    expect(arrived[0]).toStrictEqual({ ...acquire(5, 2), type: 'grant', agent: 4, trace });
    expect(seenBySwitch.at(-1)?.from).toBe(1);
  });

  it('send the packets of one tick as one batch each way', async () => {
    const arrived: LockPacket[] = [];
    const off = link2.onPacket((packet) => arrived.push(packet));
    const before = { in: ingress.stats(), out: link2.stats() };
    for (let lock = 100; lock < 105; lock++) link1.send(acquire(lock, 2));
    await waitFor(() => arrived.length === 5, { what: 'five grants at machine 2' });
    off();
    expect(arrived.map((p) => p.lock)).toEqual([100, 101, 102, 103, 104]);
    expect(ingress.stats().batchesReceived - before.in.batchesReceived).toBe(1);
    expect(ingress.stats().packetsReceived - before.in.packetsReceived).toBe(5);
    expect(link2.stats().batchesReceived - before.out.batchesReceived).toBe(1);
  });

  it('split a tick into batches of at most maxBatchPackets', async () => {
    const small = new SwitchLink({ nc: ncNodes, subjects, machine: 3, rack: 0, maxBatchPackets: 2, logger: memoryLogger() });
    const sentBefore = small.stats().batchesSent;
    for (let lock = 0; lock < 5; lock++) small.send({ ...acquire(lock, 9), machine: 3 });
    small.flush();
    expect(small.stats().batchesSent - sentBefore).toBe(3);
    small.close();
  });

  it('count and drop a malformed payload, then keep forwarding', async () => {
    const before = ingressMalformed.count();
    ncNodes.publish(subjects.switchIn(0), new Uint8Array([0x0a, 0xff]));
    ncNodes.publish(subjects.switchIn(0), new Uint8Array()); // an empty batch is not a batch
    const arrived: LockPacket[] = [];
    const off = link2.onPacket((packet) => arrived.push(packet));
    link1.send(acquire(200, 2));
    await waitFor(() => arrived.length === 1, { what: 'the grant after the garbage' });
    off();
    expect(ingressMalformed.count(subjects.switchIn(0)) - before).toBe(2);
  });

  it('stop calling a handler once unsubscribed, and survive a handler that throws', async () => {
    const calls: number[] = [];
    const off = link2.onPacket(() => calls.push(1));
    link2.onPacket(() => {
      throw new Error('protocol bug');
    });
    off();
    const arrived: LockPacket[] = [];
    link2.onPacket((packet) => arrived.push(packet));
    link1.send(acquire(300, 2));
    await waitFor(() => arrived.length === 1, { what: 'the grant' });
    expect(calls).toEqual([]);
    expect(link2.stats().handlerErrors).toBeGreaterThanOrEqual(1);
  });
});
