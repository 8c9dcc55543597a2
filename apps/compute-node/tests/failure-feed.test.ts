import { create, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { MalformedInputCounter, connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { startNatsServer } from '@lockfabric/testkit';
import type { NatsServerHandle } from '@lockfabric/testkit';
import { FailureNoticeSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFailureFeed } from '../src/failure-feed.js';
import type { FailureFeed } from '../src/failure-feed.js';

const subjects = createSubjects('feedtest');
const subject = subjects.recovery('failure');

describe('failure feed (FailureNotice → node services)', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let feed: FailureFeed;
  const malformed = new MalformedInputCounter({ logger: silentLogger });
  const heard: number[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'failure-feed-test', logger: silentLogger });
    feed = startFailureFeed({ nc, subjects, node: 1, logger: silentLogger, malformed });
    feed.onComputeNodeFailed((node) => heard.push(node));
    await nc.flush();
  });
  afterAll(async () => {
    feed?.close();
    await nc?.close();
    await nats?.stop();
  });

  const notice = (fields: Partial<{ role: string; id: string; node: number }>) =>
    toBinary(FailureNoticeSchema, create(FailureNoticeSchema, { epoch: 3n, role: 'compute', id: String(fields.node ?? ''), incarnation: 1n, reason: 'missed heartbeats', ...fields }));

  it('passes compute-node deaths on, ignores other roles and its own death, counts garbage', async () => {
    nc.publish(subject, Uint8Array.of(0xff, 0xff, 0xff)); // not a FailureNotice
    nc.publish(subject, notice({ role: 'memory', id: '0', node: 9 }));
    nc.publish(subject, notice({ role: 'compute', node: 0, id: 'not-a-node' })); // names no node
    nc.publish(subject, notice({ node: 1 })); // this node itself
    nc.publish(subject, notice({ node: 3 }));
    nc.publish(subject, notice({ node: 0, id: '2' })); // node from the id
    await nc.flush();
    const deadline = Date.now() + 5_000;
    while (heard.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toStrictEqual([3, 2]);
    expect(feed.declared).toStrictEqual([3, 2]);
    expect(malformed.count(subject)).toBe(2);
  });

  it('an unsubscribed listener hears nothing more', async () => {
    const late: number[] = [];
    const off = feed.onComputeNodeFailed((node) => late.push(node));
    off();
    nc.publish(subject, notice({ node: 4 }));
    await nc.flush();
    const deadline = Date.now() + 5_000;
    while (!heard.includes(4) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toContain(4);
    expect(late).toStrictEqual([]);
  });
});
