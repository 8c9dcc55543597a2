import { create, toBinary } from '@bufbuild/protobuf';
import { VirtualScheduler } from '@lockfabric/sim';
import { MemberSchema, MemberState, MembershipViewSchema } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { startFailureFeed } from '../src/failure-feed.js';
import { InMemoryControlBus } from '../src/in-memory-bus.js';
import { MalformedTally, silentLogger } from '../src/logger.js';
import { createSubjects } from '../src/subjects.js';
import { answerViewRecalls, recallView } from '../src/view-recall.js';

const subjects = createSubjects('recall');
const view = (epoch: bigint, states: Record<number, MemberState>) =>
  toBinary(MembershipViewSchema, create(MembershipViewSchema, { epoch, members: Object.entries(states).map(([node, state]) => create(MemberSchema, { role: 'compute', id: node, node: Number(node), incarnation: 4n, state })) }));

function rig() {
  const scheduler = new VirtualScheduler();
  const bus = new InMemoryControlBus(scheduler, { latencyNs: 1_000 });
  const malformed = new MalformedTally();
  const recall = () => recallView({ bus: bus.connect('coordinator'), subjects, logger: silentLogger, malformed, timeoutMs: 1 });
  return { scheduler, bus, malformed, recall };
}

describe('view recall (a restarted coordinator learns the members its predecessor published)', () => {
  it('a failure feed answers with the newest view it took, members and states as published', async () => {
    const { scheduler, bus, malformed, recall } = rig();
    const feed = startFailureFeed({ bus: bus.connect('compute-1'), subjects, node: 1, logger: silentLogger, malformed });
    const old = bus.connect('old-coordinator');
    old.publish(subjects.membership(), view(7n, { 1: MemberState.ALIVE, 2: MemberState.ALIVE, 3: MemberState.SUSPECT }));
    old.publish(subjects.membership(), view(9n, { 1: MemberState.ALIVE, 2: MemberState.DEAD, 3: MemberState.ALIVE }));
    old.publish(subjects.membership(), view(8n, { 1: MemberState.ALIVE })); // older: not taken
    await scheduler.run({});
    const recalled = recall();
    await scheduler.run({});
    expect(await recalled).toStrictEqual({
      epoch: 9n,
      members: [
        { role: 'compute', id: '1', node: 1, incarnation: 4n, state: 'alive' },
        { role: 'compute', id: '2', node: 2, incarnation: 4n, state: 'dead' },
        { role: 'compute', id: '3', node: 3, incarnation: 4n, state: 'alive' },
      ],
    });
    feed.close();
  });

  it('nothing to recall: nobody listens, or nobody holds a view yet (a first start), or the answer is garbage', async () => {
    const { scheduler, bus, malformed, recall } = rig();
    const none = recall();
    await scheduler.run({});
    expect(await none).toBeUndefined();
    const feed = startFailureFeed({ bus: bus.connect('compute-1'), subjects, node: 1, logger: silentLogger, malformed });
    const empty = recall();
    await scheduler.run({});
    expect(await empty).toBeUndefined();
    feed.close();
    const off = answerViewRecalls(bus.connect('liar'), subjects, () => Uint8Array.of(0xff, 0xff));
    const garbage = recall();
    await scheduler.run({});
    expect(await garbage).toBeUndefined();
    expect(malformed.count(subjects.membershipRecall())).toBe(1);
    off();
  });
});
