import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats, createSubjects, grpcPath, startHeartbeat } from '@lockfabric/live';
import { CoordinatorService, FailureNoticeSchema, MembershipViewSchema, RecoveryPhaseSchema, ResetOrderSchema, StatusRequestSchema, StatusResponseSchema } from '@lockfabric/wire';
import type { FailureNotice, MembershipView } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoordinator, type Coordinator } from '../src/coordinator.js';
import { parseRecoveryDetail } from '@lockfabric/control';
import { announceLockTable } from '@lockfabric/live';
import { callRaw, memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('recovery-test');
const HEARTBEAT_MS = 50;

let nats: NatsServerHandle;
let ncCoordinator: NatsConnection;
let ncMembers: NatsConnection;
let coordinator: Coordinator | undefined;
const notices: { notice: FailureNotice; views: number }[] = [];
const views: MembershipView[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncCoordinator = await connectNats({ servers: nats.url, name: 'coordinator', logger: memoryLogger() });
  ncMembers = await connectNats({ servers: nats.url, name: 'members', logger: memoryLogger() });
  // A throwing callback would close the connection, and the test publishes garbage on these subjects too.
  const tolerant = (handle: (data: Uint8Array) => void) => (error: Error | null, msg: { data: Uint8Array }) => {
    try {
      if (!error) handle(msg.data);
    } catch {
      // garbage
    }
  };
  ncMembers.subscribe(subjects.membership(), { callback: tolerant((data) => views.push(fromBinary(MembershipViewSchema, data))) });
  ncMembers.subscribe(subjects.recovery('failure'), { callback: tolerant((data) => notices.push({ notice: fromBinary(FailureNoticeSchema, data), views: views.length })) });
  await ncMembers.flush();
  coordinator = await startCoordinator({
    nc: ncCoordinator,
    subjects,
    cluster: 'recovery-test',
    heartbeatIntervalMs: HEARTBEAT_MS,
    missesBeforeSuspect: 2,
    grpcPort: 0,
    grpcHost: '127.0.0.1',
    logger: memoryLogger(),
    leaseBoundsMs: { dslr: 200, 'dslr-backoff': 200, redlock: 200 },
  });
});

afterAll(async () => {
  await coordinator?.close();
  await ncMembers?.close();
  await ncCoordinator?.close();
  await nats?.stop();
});

describe('coordinator recovery over NATS', () => {
  it('publishes a FailureNotice fenced by the epoch of the view that declared the member dead, and reports the recovery with timings', async () => {
    const heartbeat = startHeartbeat({ nc: ncMembers, subjects, role: 'compute', id: '4', node: 4, incarnation: 5, intervalMs: HEARTBEAT_MS, logger: memoryLogger() });
    await waitFor(() => views.some((v) => v.members.some((m) => m.id === '4')), { what: 'compute/4 in a view', timeoutMs: 10_000 });
    heartbeat.stop();
    const { notice, views: seenViews } = await waitFor(() => notices[0], { what: 'a failure notice', timeoutMs: 10_000 });
    expect(notice).toMatchObject({ role: 'compute', id: '4', node: 4, incarnation: 5n });
    expect(notice.reason).toContain('no heartbeat for 100 ms');
    // The view that declared the death went out first, with the notice's epoch.
    const deathView = views.slice(0, seenViews).find((v) => v.epoch === notice.epoch);
    expect(deathView?.members.find((m) => m.id === '4')?.state).toBe(3);

    const recovered = await waitFor(
      async () => {
        const answer = await status();
        const dslr = answer.recoveries.find((r) => r.protocol === 'dslr' && r.node === 4);
        return dslr?.done ? { answer, dslr } : undefined;
      },
      { what: 'the dslr action of the recovery done', timeoutMs: 10_000 },
    );
    const detail = parseRecoveryDetail(recovered.dslr.detail);
    expect(detail['member']).toBe('compute/4');
    expect(BigInt(detail['detected_ns'] ?? '0')).toBe(notice.timeNs);
    // 200 ms lease bound; ns times near 2^56 carry a few ns of double rounding.
    expect(Math.abs(Number(BigInt(detail['done_ns'] ?? '0') - BigInt(detail['detected_ns'] ?? '0')) - 200_000_000)).toBeLessThanOrEqual(64);
    expect(recovered.dslr.epoch).toBe(notice.epoch);
    expect(recovered.answer.recoveries.find((r) => r.protocol === 'netlock')?.detail).toContain('mechanism=driven');
    // mcs/alock are driven by the coordinator (queue-lock-recovery); with no compute node to gate, over at once
    expect(recovered.answer.recoveries.find((r) => r.protocol === 'mcs')?.detail).toContain('mechanism=driven');
  });

  it('a memory node’s report closes the fence actions; a restarted memory node gets the table announced again', async () => {
    const tables: string[] = [];
    ncMembers.subscribe(subjects.recovery('table'), {
      callback: (error, msg) => {
        if (!error) tables.push(fromBinary(ResetOrderSchema, msg.data).protocol);
      },
    });
    await announceLockTable(ncMembers, subjects, 'caslock', 3);
    await waitFor(() => tables.length === 1, { what: 'the announcement', timeoutMs: 10_000 });

    const compute = startHeartbeat({ nc: ncMembers, subjects, role: 'compute', id: '6', node: 6, incarnation: 1, intervalMs: HEARTBEAT_MS, logger: memoryLogger() });
    await waitFor(() => views.some((v) => v.members.some((m) => m.id === '6')), { what: 'compute/6 in a view', timeoutMs: 10_000 });
    compute.stop();
    const { notice } = await waitFor(() => notices.find((n) => n.notice.id === '6'), { what: 'the failure notice of compute/6', timeoutMs: 10_000 });
    const caslockOf = async () => (await status()).recoveries.find((r) => r.protocol === 'caslock' && r.node === 6);
    expect((await caslockOf())?.done).toBe(false);
    expect((await caslockOf())?.detail).toContain('mechanism=fence');
    // What a memory node sends once it fenced node 6 and freed its words.
    const report = create(RecoveryPhaseSchema, { protocol: 'caslock', epoch: notice.epoch, node: 6, done: true, detail: 'memory=0 fenced=true cleared=1' });
    ncMembers.publish(subjects.recovery('phase'), toBinary(RecoveryPhaseSchema, report));
    await waitFor(async () => (await caslockOf())?.done === true || undefined, { what: 'the caslock action done', timeoutMs: 10_000 });

    // A memory node restarts (a higher incarnation): the coordinator announces the table again.
    const first = startHeartbeat({ nc: ncMembers, subjects, role: 'memory', id: '0', node: 0, incarnation: 1, intervalMs: HEARTBEAT_MS, logger: memoryLogger() });
    await waitFor(() => views.some((v) => v.members.some((m) => m.role === 'memory' && m.incarnation === 1n)), { what: 'memory/0 in a view', timeoutMs: 10_000 });
    first.stop();
    const second = startHeartbeat({ nc: ncMembers, subjects, role: 'memory', id: '0', node: 0, incarnation: 2, intervalMs: HEARTBEAT_MS, logger: memoryLogger() });
    try {
      await waitFor(() => tables.length >= 2 || undefined, { what: 'the table announced again', timeoutMs: 10_000 });
      expect(tables.at(-1)).toBe('caslock');
    } finally {
      second.stop();
    }
  });

  it('garbage on control subjects is counted and dropped; the coordinator keeps answering', async () => {
    const before = coordinator?.malformed.count() ?? 0;
    ncMembers.publish(subjects.recovery('failure'), new Uint8Array([0xff, 0xff, 0xff]));
    ncMembers.publish(subjects.recovery('phase'), new Uint8Array([0x0a, 0xff]));
    ncMembers.publish(subjects.recovery('bogus'), new Uint8Array([1, 2, 3]));
    ncMembers.publish(subjects.membership(), new Uint8Array([0xff]));
    ncMembers.publish(subjects.heartbeat('compute', '99'), new Uint8Array(64).fill(0xee));
    // A well-formed participant report is accepted (noted), not counted as malformed.
    ncMembers.publish(subjects.recovery('phase'), toBinary(RecoveryPhaseSchema, create(RecoveryPhaseSchema, { protocol: 'dslr', node: 2, done: true })));
    await waitFor(() => (coordinator?.malformed.count() ?? 0) - before >= 5, { what: 'five malformed messages counted', timeoutMs: 10_000 });
    await ncMembers.flush();
    expect((coordinator?.malformed.count() ?? 0) - before).toBe(5);
    expect(coordinator?.ready()).toBe(true);
    expect((await status()).cluster).toBe('recovery-test');
  });
});

async function status() {
  const { response, error } = await callRaw(`127.0.0.1:${coordinator?.grpcPort}`, grpcPath(CoordinatorService.method.status), toBinary(StatusRequestSchema, create(StatusRequestSchema)));
  if (error) throw error;
  return fromBinary(StatusResponseSchema, response ?? new Uint8Array());
}
