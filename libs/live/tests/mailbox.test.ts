import type { NatsConnection } from '@nats-io/transport-node';
import type { Message } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { encodeMessage } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MailboxHub } from '../src/mailbox-hub.js';
import { MalformedInputCounter } from '../src/malformed-input.js';
import { connectNats } from '../src/nats-connect.js';
import { createSubjects } from '../src/subjects.js';
import { tracePublishOptions } from '../src/trace-header.js';
import { memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('mailbox-test');
const clock = new RealClock();
const trace = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

let nats: NatsServerHandle;
let ncA: NatsConnection;
let ncB: NatsConnection;
let hubA: MailboxHub;
let hubB: MailboxHub;
const malformedB = new MalformedInputCounter({ logger: memoryLogger() });

beforeAll(async () => {
  nats = await startNatsServer();
  ncA = await connectNats({ servers: nats.url, name: 'hub-a', logger: memoryLogger() });
  ncB = await connectNats({ servers: nats.url, name: 'hub-b', logger: memoryLogger() });
  hubA = new MailboxHub({ nc: ncA, subjects, node: 1, logger: memoryLogger() });
  hubB = new MailboxHub({ nc: ncB, subjects, node: 2, queueBound: 3, logger: memoryLogger(), malformed: malformedB });
  await Promise.all([ncA.flush(), ncB.flush()]); // subscriptions registered with the server
});

afterAll(async () => {
  await hubA?.close();
  await hubB?.close();
  await ncA?.close();
  await ncB?.close();
  await nats?.stop();
});

const soon = () => clock.nowNs() + 2_000_000_000;

describe('MailboxHub', () => {
  it('delivers across nodes over NATS with every field and the trace context', async () => {
    const sender = hubA.mailbox(7);
    const receiver = hubB.mailbox(3);
    const received = receiver.receive((m) => m.kind === 'grant' && m.lock === 42, { deadlineNs: soon() });
    sender.send({ kind: 'grant', to: receiver.self, lock: 42, epoch: 5n, value: 9n, data: new Uint8Array([1, 2]), trace });
    const beforeNs = clock.nowNs();
    const message = await received;
    // Stamped on arrival, before any protocol code sees it (the receive timestamp).
    expect(message?.receivedNs).toBeGreaterThanOrEqual(beforeNs);
    expect(message?.receivedNs).toBeLessThanOrEqual(clock.nowNs());
    expect({ ...message, receivedNs: undefined }).toStrictEqual({
      receivedNs: undefined,
      kind: 'grant',
      from: { node: 1, client: 7 },
      to: { node: 2, client: 3 },
      lock: 42,
      epoch: 5n,
      value: 9n,
      data: new Uint8Array([1, 2]),
      trace,
    });
    expect(hubA.stats().sent).toBe(1);
    expect(hubB.stats().received).toBe(1);
  });

  it('takes the trace context from the NATS header when the body has none', async () => {
    const receiver = hubB.mailbox(4);
    const body = encodeMessage({ kind: 'wake', from: { node: 1, client: 1 }, to: receiver.self, lock: 1 });
    ncA.publish(subjects.nodeMessages(2, 1), body, tracePublishOptions(trace));
    expect((await receiver.receive(() => true, { deadlineNs: soon() }))?.trace).toStrictEqual(trace);
  });

  it('delivers between clients of one node without NATS, with a copy of the data', async () => {
    const sentBefore = hubA.stats().sent;
    const data = new Uint8Array([7]);
    hubA.mailbox(1).send({ kind: 'handover', to: { node: 1, client: 2 }, lock: 3, data });
    data[0] = 0;
    const message = await hubA.mailbox(2).receive((m) => m.kind === 'handover', { deadlineNs: soon() });
    expect(message?.from).toEqual({ node: 1, client: 1 });
    expect(message?.data).toEqual(new Uint8Array([7]));
    expect(hubA.stats().sent).toBe(sentBefore);
    expect(hubA.stats().deliveredLocally).toBeGreaterThanOrEqual(1);
  });

  it('returns the oldest queued match and leaves other messages queued', async () => {
    const a = hubA.mailbox(10);
    const b = hubA.mailbox(11);
    for (const lock of [1, 2, 3]) a.send({ kind: 'grant', to: b.self, lock });
    a.send({ kind: 'reset', to: b.self, lock: 9 });
    expect((await b.receive((m) => m.kind === 'reset'))?.lock).toBe(9);
    expect((await b.receive((m) => m.kind === 'grant'))?.lock).toBe(1);
    expect(hubA.queued(11)).toBe(2);
  });

  it('resolves undefined at the deadline and when the signal aborts (the port contract of every substrate)', async () => {
    const mailbox = hubB.mailbox(20);
    expect(await mailbox.receive(() => true, { deadlineNs: clock.nowNs() + 20_000_000 })).toBeUndefined();
    expect(await mailbox.receive(() => true, { deadlineNs: clock.nowNs() - 1 })).toBeUndefined();
    const controller = new AbortController();
    const waiting = mailbox.receive(() => true, { signal: controller.signal });
    controller.abort(new Error('client stopped'));
    expect(await waiting).toBeUndefined();
    const aborted = new AbortController();
    aborted.abort();
    expect(await mailbox.receive(() => true, { signal: aborted.signal })).toBeUndefined();
    // Neither left a waiter behind: the next message is queued, not swallowed.
    hubB.mailbox(21).send({ kind: 'wake', to: mailbox.self, lock: 0 });
    expect(hubB.queued(20)).toBe(1);
  });

  it('bounds each client queue and drops the newest message when it is full', async () => {
    const sender = hubA.mailbox(30);
    const to = { node: 2, client: 31 };
    for (let lock = 0; lock < 5; lock++) sender.send({ kind: 'grant', to, lock });
    await waitFor(() => hubB.queued(31) + hubB.stats().droppedQueueFull >= 5, { what: 'five messages at node 2' });
    expect(hubB.queued(31)).toBe(3);
    expect(hubB.stats().droppedQueueFull).toBe(2);
    const kept: (Message | undefined)[] = [];
    for (let i = 0; i < 3; i++) kept.push(await hubB.mailbox(31).receive(() => true));
    expect(kept.map((m) => m?.lock)).toEqual([0, 1, 2]);
  });

  it('counts and drops malformed, misrouted and forged-sender payloads, and keeps delivering', async () => {
    const before = malformedB.count();
    ncA.publish(subjects.nodeMessages(2, 1), new Uint8Array([0xff, 0xff, 0xff]));
    ncA.publish(subjects.nodeMessages(2, 1), encodeMessage({ kind: 'wake', from: { node: 1, client: 1 }, to: { node: 5, client: 0 }, lock: 0 }));
    // Published as node 1 but naming node 3 as the sender: the subject wins, the message is dropped.
    ncA.publish(subjects.nodeMessages(2, 1), encodeMessage({ kind: 'wake', from: { node: 3, client: 1 }, to: { node: 2, client: 40 }, lock: 66 }));
    const receiver = hubB.mailbox(40);
    const next = receiver.receive(() => true, { deadlineNs: soon() });
    hubA.mailbox(1).send({ kind: 'wake', to: receiver.self, lock: 77 });
    const delivered = await next;
    expect(delivered?.lock).toBe(77);
    expect(delivered?.from).toStrictEqual({ node: 1, client: 1 });
    expect(malformedB.count(subjects.nodeInbox(2)) - before).toBe(3);
  });
});
