import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { RealClock } from '@lockfabric/realtime';
import { RealTimeScheduler } from '@lockfabric/sim';
import { FailureNoticeSchema, HeartbeatSchema, MemberSchema, MemberState, MembershipViewSchema } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlBus } from './bus.js';
import { InMemoryControlBus } from './in-memory-bus.js';
import { MalformedTally, silentLogger } from './logger.js';
import { startRejoinWatch } from './rejoin-watch.js';
import { createSubjects } from './subjects.js';
import type { RejoinWatch } from './rejoin-watch.js';

const subjects = createSubjects('rejointest');
const NODE = 2;
const FIRST = 1_000n;

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('rejoin watch (a running compute node declared dead rejoins)', () => {
  let nc: ControlBus;
  let watch: RejoinWatch;
  const malformed = new MalformedTally();
  const retired: string[] = [];
  const beats: bigint[] = [];

  const view = (epoch: bigint, incarnation: bigint, state: MemberState) =>
    toBinary(MembershipViewSchema, create(MembershipViewSchema, { epoch, members: [create(MemberSchema, { role: 'compute', id: String(NODE), node: NODE, incarnation, state })] }));
  const heartbeat = (incarnation: bigint) => toBinary(HeartbeatSchema, create(HeartbeatSchema, { role: 'compute', id: String(NODE), node: NODE, incarnation, seq: 1n }));

  beforeAll(async () => {
    const clock = new RealClock();
    nc = new InMemoryControlBus(new RealTimeScheduler(clock)).connect('rejoin-watch-test');
    nc.subscribe(subjects.heartbeat('compute', String(NODE)), (msg) => void beats.push(fromBinary(HeartbeatSchema, msg.data).incarnation));
    watch = startRejoinWatch({
      bus: nc,
      clock,
      subjects,
      node: NODE,
      heartbeatIntervalMs: 50,
      logger: silentLogger,
      malformed,
      retire: async (reason) => void retired.push(reason),
      nowMs: () => 5_000,
    });
  });
  afterAll(async () => {
    watch?.close();
  });

  it('learns its incarnation from its own heartbeat, ignores garbage and other lives, rejoins on its own death', async () => {
    nc.publish(subjects.membership(), view(1n, FIRST, MemberState.DEAD)); // before it knows who it is: nothing
    nc.publish(subjects.heartbeat('compute', String(NODE)), heartbeat(FIRST)); // the service's heartbeat
    await until(() => watch.incarnation() === FIRST, 'the first incarnation learned');
    nc.publish(subjects.membership(), Uint8Array.of(0xff, 0xff)); // not a view
    nc.publish(subjects.membership(), view(2n, FIRST, MemberState.ALIVE));
    nc.publish(subjects.membership(), view(3n, FIRST - 1n, MemberState.DEAD)); // an earlier life
    nc.publish(subjects.membership(), view(1n, FIRST, MemberState.DEAD)); // stale: older than epoch 2
    await until(() => malformed.count(subjects.membership()) === 1, 'the garbage counted');
    expect(retired).toStrictEqual([]);

    nc.publish(subjects.recovery('failure'), toBinary(FailureNoticeSchema, create(FailureNoticeSchema, { epoch: 4n, role: 'compute', id: String(NODE), node: NODE, incarnation: FIRST, reason: 'missed heartbeats' })));
    await until(() => watch.rejoins() === 1, 'the rejoin');
    expect(retired).toHaveLength(1);
    expect(retired[0]).toContain(`incarnation ${FIRST} dead`);
    // The new incarnation is above the old one and heartbeats on the node's subject.
    expect(watch.incarnation()).toBe(5_000n);
    await until(() => beats.includes(5_000n), 'a heartbeat of the new incarnation');

    // The old death announced again does not make it rejoin twice.
    nc.publish(subjects.membership(), view(4n, FIRST, MemberState.DEAD));
    nc.publish(subjects.membership(), view(5n, 5_000n, MemberState.ALIVE));
    await until(() => beats.filter((b) => b === 5_000n).length >= 3, 'more heartbeats');
    expect(watch.rejoins()).toBe(1);
  });
});
