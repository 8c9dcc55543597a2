import { create, toBinary } from '@bufbuild/protobuf';
import { RealClock } from '@lockfabric/realtime';
import { RealTimeScheduler } from '@lockfabric/sim';
import { FailureNoticeSchema, MemberSchema, MemberState, MembershipViewSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlBus } from '../src/bus.js';
import { startFailureFeed } from '../src/failure-feed.js';
import type { FailureFeed } from '../src/failure-feed.js';
import { InMemoryControlBus } from '../src/in-memory-bus.js';
import { MalformedTally, silentLogger } from '../src/logger.js';
import { createSubjects } from '../src/subjects.js';

const subjects = createSubjects('feedtest');
const subject = subjects.recovery('failure');

describe('failure feed (FailureNotice → node services)', () => {
  let nc: ControlBus;
  let feed: FailureFeed;
  const malformed = new MalformedTally();
  const heard: number[] = [];

  beforeAll(async () => {
    // real time on the event loop: the feed as a compute node runs it
    nc = new InMemoryControlBus(new RealTimeScheduler(new RealClock())).connect('failure-feed-test');
    feed = startFailureFeed({ bus: nc, subjects, node: 1, logger: silentLogger, malformed });
    feed.onComputeNodeFailed((node) => heard.push(node));
  });
  afterAll(async () => {
    feed?.close();
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
    const deadline = Date.now() + 5_000;
    while (!heard.includes(4) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard).toContain(4);
    expect(late).toStrictEqual([]);
  });

  const view = (epoch: bigint, members: [node: number, incarnation: bigint, state: MemberState][]) =>
    toBinary(MembershipViewSchema, create(MembershipViewSchema, { epoch, members: members.map(([node, incarnation, state]) => create(MemberSchema, { role: 'compute', id: String(node), node, incarnation, state })) }));

  it('views count as the memory nodes count them: listed dead, or gone from a newer view, after being listed alive', async () => {
    const before = heard.length;
    nc.publish(subjects.membership(), view(10n, [[5, 1n, MemberState.ALIVE], [6, 1n, MemberState.ALIVE], [7, 1n, MemberState.ALIVE], [1, 1n, MemberState.ALIVE]]));
    // stale: older than epoch 10, says nothing
    nc.publish(subjects.membership(), view(9n, []));
    // 5 restarted (a higher incarnation, alive): not a death; 6 listed dead; 7 and this node (1) gone
    nc.publish(subjects.membership(), view(11n, [[5, 2n, MemberState.ALIVE], [6, 1n, MemberState.DEAD]]));
    nc.publish(subjects.membership(), Uint8Array.of(0xff, 0xff));
    const deadline = Date.now() + 5_000;
    while (heard.length < before + 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(heard.slice(before)).toStrictEqual([6, 7]);
    expect(malformed.count(subjects.membership())).toBe(1);
  });
});
