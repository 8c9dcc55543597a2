import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { MalformedTally, startFailureFeed } from '@lockfabric/control';
import { NatsControlBus, connectNats, createSubjects, grpcPath, startHeartbeat } from '@lockfabric/live';
import type { HeartbeatPublisher } from '@lockfabric/live';
import { CoordinatorService, FailureNoticeSchema, HeartbeatSchema, MemberState, MembershipViewSchema, StatusRequestSchema, StatusResponseSchema } from '@lockfabric/wire';
import type { MembershipView, StatusResponse } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoordinator, type Coordinator } from '../src/coordinator.js';
import { callRaw, memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('coord-test');
const HEARTBEAT_MS = 50;

let nats: NatsServerHandle;
let ncCoordinator: NatsConnection;
let ncMembers: NatsConnection;
let coordinator: Coordinator | undefined;
let heartbeat: HeartbeatPublisher | undefined;
const views: MembershipView[] = [];

const start = (expectedComputeNodes?: readonly number[]) =>
  startCoordinator({ nc: ncCoordinator, subjects, cluster: 'coord-test', heartbeatIntervalMs: HEARTBEAT_MS, missesBeforeSuspect: 2, grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger(), ...(expectedComputeNodes ? { expectedComputeNodes } : {}) });

const beat = (incarnation: number, node = 7) =>
  startHeartbeat({ nc: ncMembers, subjects, role: 'compute', id: String(node), node, incarnation, intervalMs: HEARTBEAT_MS, logger: memoryLogger() });

const stateOf = (view: MembershipView | undefined) => view?.members.find((m) => m.role === 'compute' && m.id === '7')?.state;

/** The first view after `index` in which compute/7 is in `state`. */
const viewAfter = (index: number, state: MemberState, what: string) =>
  waitFor(() => views.slice(index).find((v) => stateOf(v) === state), { what, timeoutMs: 10_000 });

async function status(): Promise<StatusResponse> {
  const { response, error } = await callRaw(`127.0.0.1:${coordinator?.grpcPort}`, grpcPath(CoordinatorService.method.status), toBinary(StatusRequestSchema, create(StatusRequestSchema)));
  if (error) throw error;
  return fromBinary(StatusResponseSchema, response ?? new Uint8Array());
}

beforeAll(async () => {
  nats = await startNatsServer();
  ncCoordinator = await connectNats({ servers: nats.url, name: 'coordinator', logger: memoryLogger() });
  ncMembers = await connectNats({ servers: nats.url, name: 'members', logger: memoryLogger() });
  ncMembers.subscribe(subjects.membership(), {
    callback: (error, msg) => {
      // A throwing callback would close the connection; the test publishes garbage here too.
      try {
        if (!error) views.push(fromBinary(MembershipViewSchema, msg.data));
      } catch {
        // not a view
      }
    },
  });
  await ncMembers.flush();
  coordinator = await start();
});

afterAll(async () => {
  heartbeat?.stop();
  await coordinator?.close();
  await ncMembers?.close();
  await ncCoordinator?.close();
  await nats?.stop();
});

describe('coordinator over NATS', () => {
  it('publishes a view with a heartbeating member, then declares it dead in a higher epoch when it stops', async () => {
    heartbeat = beat(1);
    const alive = await viewAfter(0, MemberState.ALIVE, 'a view with compute/7 alive');
    heartbeat.stop();
    const dead = await viewAfter(views.indexOf(alive), MemberState.DEAD, 'a view with compute/7 dead');
    expect(dead.epoch).toBeGreaterThan(alive.epoch);
    const epochs = views.map((v) => v.epoch);
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]).toBeGreaterThanOrEqual(epochs[i - 1] as bigint);
  });

  it('drops garbage on heartbeat subjects and still answers Status', async () => {
    ncMembers.publish(subjects.heartbeat('compute', '9'), new Uint8Array([0xff, 0xff, 0xff]));
    ncMembers.publish(subjects.heartbeat('memory', '1'), toBinary(HeartbeatSchema, create(HeartbeatSchema, { role: 'compute', id: '7', incarnation: 99n })));
    ncMembers.publish(subjects.membership(), new Uint8Array([0xff, 0xff]));
    await waitFor(() => coordinator?.malformed.count() === 3, { what: 'three malformed messages counted' });
    const answer = await status();
    expect(answer.cluster).toBe('coord-test');
    // compute/7 died in the test before: Status lists its recovery, one entry per protocol action.
    expect(answer.recoveries.length).toBeGreaterThan(0);
    expect(answer.recoveries.every((r) => r.node === 7 && r.epoch > 0n)).toBe(true);
    expect(answer.view?.epoch).toBe(views.at(-1)?.epoch);
    const member = answer.view?.members.find((m) => m.id === '7');
    expect(member).toMatchObject({ role: 'compute', node: 7, incarnation: 1n, state: MemberState.DEAD });
    // The forged heartbeat for compute/7 (incarnation 99) on memory/1's subject changed nothing.
    expect(answer.view?.members.map((m) => `${m.role}/${m.id}`)).toStrictEqual(['compute/7']);
    expect((answer.view?.timeNs ?? 0n) - (member?.lastHeartbeatNs ?? 0n)).toBeGreaterThan(0n);
  });

  it('lets the member rejoin with a higher incarnation, and a restarted coordinator continues above the last epoch', async () => {
    const mark = views.length;
    heartbeat = beat(2);
    const rejoined = await viewAfter(mark, MemberState.ALIVE, 'a view with compute/7 alive again');
    expect(rejoined.members[0]?.incarnation).toBe(2n);

    await coordinator?.close();
    // Every view the old coordinator published has reached the test's subscriber after these round trips.
    await ncCoordinator.flush();
    await ncMembers.flush();
    const lastEpoch = views.reduce((max, v) => (v.epoch > max ? v.epoch : max), 0n);
    const afterRestart = views.length;
    coordinator = await start();
    const first = await viewAfter(afterRestart, MemberState.ALIVE, 'the first view of the restarted coordinator');
    expect(first.epoch).toBeGreaterThan(lastEpoch);
    heartbeat.stop();
  });

  // NATS keeps no view: the restarted coordinator learns the members its predecessor published from
  // a compute node's failure feed (ctl.membership.recall), so a node that died while it was down,
  // which it never hears, is still declared dead, with a FailureNotice, one timeout after its start.
  it('a node that dies while no coordinator runs is declared dead by the restarted one, recalled from a survivor', async () => {
    const feed = startFailureFeed({ bus: new NatsControlBus(ncMembers), subjects, node: 8, logger: memoryLogger(), malformed: new MalformedTally() });
    await ncMembers.flush(); // the feed hears every view from here on
    const survivor = beat(1, 8);
    heartbeat = beat(3);
    const both = await waitFor(() => views.find((v) => stateOf(v) === MemberState.ALIVE && v.members.find((m) => m.id === '7')?.incarnation === 3n && v.members.some((m) => m.id === '8')), { what: 'a view with compute/7#3 and compute/8 alive', timeoutMs: 10_000 });
    await coordinator?.close();
    heartbeat.stop(); // dies while no coordinator runs
    await ncMembers.flush();
    const notices: bigint[] = [];
    const sub = ncMembers.subscribe(subjects.recovery('failure'), { callback: (_e, msg) => void notices.push(fromBinary(FailureNoticeSchema, msg.data).incarnation) });
    const afterRestart = views.length;
    coordinator = await start();
    const dead = await viewAfter(afterRestart, MemberState.DEAD, 'the restarted coordinator declaring compute/7 dead');
    expect(dead.epoch).toBeGreaterThan(both.epoch);
    expect(dead.members.find((m) => m.id === '7')?.incarnation).toBe(3n);
    expect(dead.members.find((m) => m.id === '8')?.state).toBe(MemberState.ALIVE);
    await waitFor(() => notices.includes(3n), { what: 'the failure notice of compute/7#3', timeoutMs: 10_000 });
    expect(feed.declared).toContain(7);
    sub.unsubscribe();
    feed.close();
    survivor.stop();
  });

  // No participant holds a view naming node 10 (it died before any view did): only the
  // configuration says it belongs. 11 heartbeats; 10 is declared dead one timeout after the start.
  it('an expected compute node never heard is declared dead with a notice; a late heartbeat names the dead incarnation, and a higher one rejoins', async () => {
    await coordinator?.close();
    await ncCoordinator.flush();
    const notices: string[] = [];
    const sub = ncMembers.subscribe(subjects.recovery('failure'), {
      callback: (_e, msg) => {
        const notice = fromBinary(FailureNoticeSchema, msg.data);
        notices.push(`${notice.node}#${notice.incarnation}`);
      },
    });
    await ncMembers.flush();
    const member = (v: MembershipView, id: string) => v.members.find((m) => m.role === 'compute' && m.id === id);
    const viewWith = (from: number, id: string, state: MemberState, incarnation: bigint, what: string) =>
      waitFor(() => views.slice(from).find((v) => member(v, id)?.state === state && member(v, id)?.incarnation === incarnation), { what, timeoutMs: 10_000 });
    const afterRestart = views.length;
    const alive = beat(5, 11);
    coordinator = await start([10, 11]);
    const first = await viewWith(afterRestart, '10', MemberState.DEAD, 0n, 'compute/10 declared dead unheard');
    expect(member(first, '11')).toMatchObject({ state: MemberState.ALIVE, incarnation: 5n });
    await waitFor(() => notices.includes('10#0'), { what: 'the failure notice of compute/10', timeoutMs: 10_000 });
    expect(coordinator.recoveries.all().some((r) => r.id === '10' && r.incarnation === 0n)).toBe(true);
    // the process was running all along, or started since: its incarnation is the dead one
    const late = beat(4, 10);
    await viewWith(afterRestart, '10', MemberState.DEAD, 4n, 'compute/10 dead under the incarnation it named');
    await waitFor(() => notices.includes('10#4'), { what: 'the failure notice of compute/10#4', timeoutMs: 10_000 });
    late.stop();
    const rejoin = beat(6, 10);
    await viewWith(afterRestart, '10', MemberState.ALIVE, 6n, 'compute/10 rejoined as incarnation 6');
    expect(notices.filter((n) => n.startsWith('11#'))).toStrictEqual([]);
    rejoin.stop();
    alive.stop();
    sub.unsubscribe();
  });
});
