import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { NatsConnection } from '@nats-io/transport-node';
import { MalformedInputCounter, announceSwitchControl, connectNats, createSubjects, rawMethodOf, startHeartbeat, unaryHandler } from '@lockfabric/live';
import type { HeartbeatPublisher } from '@lockfabric/live';
import {
  DescribeSwitchResponseSchema,
  FailureNoticeSchema,
  FissRecoveryReplySchema,
  FissRecoveryRequestSchema,
  FissSwitchAdmissionSchema,
  MembershipViewSchema,
  ReadRegistersResponseSchema,
  RegisterArrayDescriptorSchema,
  ResetSwitchResponseSchema,
  SwitchControlService,
  WriteRegistersResponseSchema,
} from '@lockfabric/wire';
import type { FailureNotice, FissSwitchAdmission, MembershipView } from '@lockfabric/wire';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoordinator, type Coordinator } from '../src/coordinator.js';
import { memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const subjects = createSubjects('fiss-exclusion-test');
const HEARTBEAT_MS = 50;
const LOCKS = 8;

/** SwitchControl with the fisslock arrays over plain arrays: what S3 needs of a switch-dataplane. */
async function fakeSwitchControl(): Promise<{ port: number; regs: Map<string, number[]>; close(): void }> {
  const lengths: Record<string, number> = { 'fisslock.seq': 256, 'fisslock.free': LOCKS, 'fisslock.rw': LOCKS, 'fisslock.mid': LOCKS, 'fisslock.inca': LOCKS };
  const fresh = (): Map<string, number[]> => new Map(Object.entries(lengths).map(([n, len]) => [n, new Array<number>(len).fill(n === 'fisslock.free' ? 1 : 0)]));
  let regs = fresh();
  const unary = { malformed: new MalformedInputCounter({ logger: memoryLogger() }) };
  const m = SwitchControlService.method;
  const server = new Server();
  server.addService(
    { describe: rawMethodOf(m.describe), readRegisters: rawMethodOf(m.readRegisters), writeRegisters: rawMethodOf(m.writeRegisters), reset: rawMethodOf(m.reset) },
    {
      describe: unaryHandler(m.describe, unary, () =>
        create(DescribeSwitchResponseSchema, { program: 'fisslock', arrays: Object.entries(lengths).map(([name, length]) => create(RegisterArrayDescriptorSchema, { name, length, widthBits: 32 })), admissionOpen: true, admissionEpoch: 1n }),
      ),
      readRegisters: unaryHandler(m.readRegisters, unary, (r) => create(ReadRegistersResponseSchema, { array: r.array, index: r.index, values: regs.get(r.array)!.slice(r.index, r.index + Math.max(1, r.count)) })),
      writeRegisters: unaryHandler(m.writeRegisters, unary, (r) => {
        r.values.forEach((v, k) => (regs.get(r.array)![r.index + k] = v));
        return create(WriteRegistersResponseSchema, { written: r.values.length });
      }),
      reset: unaryHandler(m.reset, unary, () => {
        regs = fresh();
        return create(ResetSwitchResponseSchema);
      }),
    },
  );
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { port, get regs() { return regs; }, close: () => server.forceShutdown() };
}

let nats: NatsServerHandle;
let ncCoordinator: NatsConnection;
let ncMembers: NatsConnection;
let coordinator: Coordinator | undefined;
let control: Awaited<ReturnType<typeof fakeSwitchControl>>;
const beats: HeartbeatPublisher[] = [];
const views: MembershipView[] = [];
const notices: FailureNotice[] = [];
const admissions: FissSwitchAdmission[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  ncCoordinator = await connectNats({ servers: nats.url, name: 'coordinator', logger: memoryLogger() });
  ncMembers = await connectNats({ servers: nats.url, name: 'members', logger: memoryLogger() });
  control = await fakeSwitchControl();
  ncMembers.subscribe(subjects.membership(), { callback: (e, msg) => void (e ? undefined : views.push(fromBinary(MembershipViewSchema, msg.data))) });
  ncMembers.subscribe(subjects.recovery('failure'), { callback: (e, msg) => void (e ? undefined : notices.push(fromBinary(FailureNoticeSchema, msg.data))) });
  ncMembers.subscribe(subjects.switchAdmission(), { callback: (e, msg) => void (e ? undefined : admissions.push(fromBinary(FissSwitchAdmissionSchema, msg.data))) });
  // compute node 1 takes part (an empty FissLock pool); compute node 2 heartbeats but never answers a recovery call
  for (const verb of ['pause', 'report', 'apply', 'resume']) {
    ncMembers.subscribe(subjects.recoveryCall('fiss', 1, verb), {
      callback: (e, msg) => {
        if (e) return;
        const { epoch } = fromBinary(FissRecoveryRequestSchema, msg.data);
        msg.respond(toBinary(FissRecoveryReplySchema, create(FissRecoveryReplySchema, { epoch, machine: 1, active: true, policy: 'read-preferring', ...(verb === 'report' ? { report: { machine: 1 } } : {}) })));
      },
    });
  }
  await ncMembers.flush();
  coordinator = await startCoordinator({ nc: ncCoordinator, subjects, cluster: 'fiss-exclusion-test', heartbeatIntervalMs: HEARTBEAT_MS, missesBeforeSuspect: 20, grpcPort: 0, grpcHost: '127.0.0.1', logger: memoryLogger() });
});

afterAll(async () => {
  for (const b of beats) b.stop();
  await coordinator?.close();
  control?.close();
  await ncMembers?.close();
  await ncCoordinator?.close();
  await nats?.stop();
});

const beat = (role: string, id: string, node: number, incarnation: number): HeartbeatPublisher => {
  const b = startHeartbeat({ nc: ncMembers, subjects, role, id, node, incarnation, intervalMs: HEARTBEAT_MS, logger: memoryLogger() });
  beats.push(b);
  return b;
};

describe('coordinator: a FissLock recovery a live compute node does not answer (a recovery must not hang on a silent node)', () => {
  it('declares that node dead (view, notice), runs S1–S3 without it and opens the switch at the new epoch', async () => {
    beat('compute', '1', 1, 1);
    beat('compute', '2', 2, 1);
    const first = beat('switch', '200', 200, 1);
    await announceSwitchControl(ncMembers, subjects, 0, `127.0.0.1:${control.port}`);
    await waitFor(() => views.some((v) => v.members.filter((m) => m.state === 1).length === 3), { what: 'all three members alive in a view', timeoutMs: 10_000 });
    // the switch restarts with empty registers: S1–S3 must run, and compute node 2 does not answer
    first.stop();
    beat('switch', '200', 200, 2);
    const notice = await waitFor(() => notices.find((n) => n.id === '2'), { what: "compute/2's failure notice", timeoutMs: 15_000 });
    expect(notice.reason).toContain('did not take part in FissLock recovery');
    const opened = await waitFor(() => admissions.find((a) => a.open && a.epoch >= notice.epoch), { what: 'the switch opened after S3 without compute/2', timeoutMs: 15_000 });
    // the view that declared compute/2 dead went out first, and the switch was closed until then
    expect(views.find((v) => v.epoch === notice.epoch)?.members.find((m) => m.id === '2')?.state).toBe(3);
    const fromClose = admissions.slice(admissions.findIndex((a) => !a.open));
    expect(fromClose.findIndex((a) => a.open)).toBe(fromClose.indexOf(opened));
    // compute/2's seq window is fenced (its late packets fall in the gap); its heartbeats are now ignored
    expect(control.regs.get('fisslock.seq')![2]).not.toBe(0);
    expect(coordinator!.membership.detector.member('compute', '2')?.state).toBe('dead');
    // the switch's recovery and compute/2's own recovery both show the steps (recorded once the survivors resumed, after the open)
    const withSteps = (): string[] => coordinator!.recoveries.all().flatMap((r) => r.actions.filter((a) => a.protocol === 'fisslock' && (a.steps?.length ?? 0) === 3).map(() => `${r.role}/${r.id}`)).sort();
    await waitFor(() => withSteps().length === 2, { what: 'the steps recorded', timeoutMs: 10_000 });
    expect(withSteps()).toStrictEqual(['compute/2', 'switch/200']);
  });
});
