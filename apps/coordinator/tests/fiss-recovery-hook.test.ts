import type { NatsConnection } from '@nats-io/transport-node';
import { create, toBinary } from '@bufbuild/protobuf';
import { RecoveryBook } from '@lockfabric/control';
import { protocolRecoveries } from '@lockfabric/lock-catalog';
import { FissCallError, startFissRecoveryHook } from '@lockfabric/lock-catalog-control';
import type { FissRecoveryHook, FissRecoveryHookDeps, HookParticipant } from '@lockfabric/lock-catalog-control';
import { MalformedInputCounter, NatsControlBus, announceSwitchControl, connectNats, createSubjects } from '@lockfabric/live';
import { FissStuckLockSchema } from '@lockfabric/wire';
import type { MachineOrders, ServerReport } from '@lockfabric/lock-catalog';
import type { NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeSwitch, memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const FAST = { culpritAttempts: 2, retryDelayMs: 5, maxRetryDelayMs: 20 };

/** Compute node `machine` holding lock `lid` exclusively through its own agent; `silent` never answers. */
function computeNode(machine: NodeId, lid: number, log: string[], silent = () => false): (node: NodeId) => HookParticipant {
  const report: ServerReport = {
    machine,
    agents: [{ lid, machine, mode: 'exclusive', holders: [{ mid: machine, task: 1 }], wqueue: [], state: 'live' }],
    clients: [{ lid, mid: machine, task: 1, mode: 'exclusive', state: 'granted', startNs: 0 }],
  };
  const call = async <T>(verb: string, epoch: bigint, value: T): Promise<T> => {
    if (silent()) throw new FissCallError(machine, 'pause', 'no answer within 2000 ms');
    log.push(`${verb} ${machine}@${epoch}`);
    return value;
  };
  return () => ({
    machine,
    policy: 'read-preferring',
    pause: (epoch) => call('pause', epoch, true),
    report: (epoch) => call('report', epoch, report),
    apply: (epoch, _orders: MachineOrders) => call('apply', epoch, undefined),
    resume: (epoch) => call('resume', epoch, undefined),
  });
}

describe('the FissLock recovery hook at the coordinator-down edges', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let hook: FissRecoveryHook | undefined;
  const subjects = createSubjects('fiss-hook-test');

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'fiss-hook-test', logger: memoryLogger() });
  });
  afterEach(() => {
    hook?.close();
    hook = undefined;
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  function start(overrides: Partial<FissRecoveryHookDeps> & Pick<FissRecoveryHookDeps, 'participant' | 'switchControl' | 'liveComputeNodes'>): { hook: FissRecoveryHook; book: RecoveryBook; logger: ReturnType<typeof memoryLogger> } {
    const logger = memoryLogger();
    const book = new RecoveryBook({ protocols: protocolRecoveries() });
    hook = startFissRecoveryHook({ bus: new NatsControlBus(nc), subjects, logger, clock: new RealClock(), recoveries: book, malformed: new MalformedInputCounter({ logger }), epoch: () => 9n, settleMs: 1, announceWaitMs: 2_000, attempts: FAST, ...overrides });
    return { hook, book, logger };
  }

  it('gap 1: a switch first seen closed (restarted while no coordinator ran) gets S1–S3 before it opens, after the first view', async () => {
    const sw = fakeSwitch(false);
    const log: string[] = [];
    let view = false;
    let epoch = 0n;
    const { hook, book } = start({ participant: computeNode(1, 5, log), switchControl: sw.control, liveComputeNodes: () => [1], hasView: () => view, epoch: () => epoch });
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    hook.switchJoined({ id: '200', node: 200, incarnation: 2n });
    // during the warm-up nothing is opened and nobody is paused: the nodes would refuse the older epoch
    await waitFor(() => sw.state.loads >= 1, { what: 'the switch described' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hook.admissions).toStrictEqual([]);
    expect(log).toStrictEqual([]);
    epoch = 77n;
    view = true;
    await waitFor(() => hook.admissions.length === 2, { what: 'closed, then opened after S3' });
    await hook.idle();
    expect(hook.admissions).toStrictEqual([
      { node: 200, epoch: 77n, open: false },
      { node: 200, epoch: 77n, open: true },
    ]);
    expect(log).toStrictEqual(['pause 1@77', 'report 1@77', 'apply 1@77', 'resume 1@77']);
    // the lock held across the outage is back in the registers, with its agent on machine 1
    expect(sw.state.regs.get('fisslock.free')![5]).toBe(0);
    expect(sw.state.regs.get('fisslock.mid')![5]).toBe(2);
    // Status shows the steps under the switch member
    const steps = book.all().flatMap((r) => r.actions.filter((a) => a.protocol === 'fisslock').flatMap((a) => a.steps ?? []));
    expect(steps.map((s) => s.stage)).toStrictEqual(['S1', 'S2', 'S3']);
  });

  it('gap 1: a switch first seen open (the coordinator restarted, the switch did not) keeps its registers: no recovery', async () => {
    const sw = fakeSwitch(true);
    const log: string[] = [];
    const { hook } = start({ participant: computeNode(1, 5, log), switchControl: sw.control, liveComputeNodes: () => [1] });
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    hook.switchJoined({ id: '200', node: 200, incarnation: 2n });
    await waitFor(() => hook.admissions.length === 1, { what: 'the admission' });
    await hook.idle();
    expect(hook.admissions).toStrictEqual([{ node: 200, epoch: 9n, open: true }]);
    expect(log).toStrictEqual([]);
    expect(sw.state.writes).toBe(0);
  });

  it('gap 2: a compute node that never answers is declared dead and S1–S3 runs again without it; the switch opens', async () => {
    const sw = fakeSwitch(true);
    const log: string[] = [];
    const live = new Set<NodeId>([1, 2]);
    const declared: string[] = [];
    let epoch = 20n;
    const nodes: Record<number, (node: NodeId) => HookParticipant> = { 1: computeNode(1, 5, log), 2: computeNode(2, 6, log, () => true) };
    const ref: { hook?: FissRecoveryHook } = {}; // the hook is made after the deps that call it
    const { hook: made } = start({
      participant: (n) => nodes[n]!(n),
      switchControl: sw.control,
      liveComputeNodes: () => [...live],
      epoch: () => epoch,
      // as the coordinator does: a new view without the node, then its death's own recovery
      declareDead: (node, reason) => {
        declared.push(`${node}: ${reason.split(':')[0]}`);
        live.delete(node);
        epoch++;
        ref.hook?.computeDead({ id: String(node), node, incarnation: 1n });
      },
    });
    ref.hook = made;
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    made.computeDead({ id: '3', node: 3, incarnation: 1n });
    await waitFor(() => made.admissions.at(-1)?.open === true, { what: 'the switch opened again' });
    await made.idle();
    expect(declared).toStrictEqual(['2: did not take part in FissLock recovery (2 attempts)']);
    expect(made.excluded).toStrictEqual([2]);
    // closed at each attempt's epoch, opened once, after S3 of the attempt without node 2
    expect(made.admissions.map((a) => `${a.open ? 'open' : 'close'}@${a.epoch}`)).toStrictEqual(['close@20', 'close@20', 'close@21', 'open@21']);
    expect(made.completed).toHaveLength(1);
    expect(made.completed[0]?.plan.failed).toStrictEqual([2, 3]);
    expect(made.completed[0]?.machines).toStrictEqual([1]);
    // node 1's lock stands; node 2's (6) is free, its seq window fenced
    expect(sw.state.regs.get('fisslock.free')!.slice(5, 7)).toStrictEqual([0, 1]);
    expect(sw.state.regs.get('fisslock.seq')![2]).not.toBe(0);
  });

  it('gap 2: a switch whose control plane fails is retried until it answers, then opened; a dead switch is left to its restart', async () => {
    const sw = fakeSwitch(true);
    sw.state.failLoads = 3;
    const log: string[] = [];
    let switches: NodeId[] = [200];
    const { hook, logger } = start({ participant: computeNode(1, 5, log), switchControl: sw.control, liveComputeNodes: () => [1], liveSwitches: () => switches });
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    hook.switchBack({ id: '200', node: 200, incarnation: 3n });
    await hook.idle();
    expect(sw.state.loads).toBe(4);
    expect(hook.admissions.map((a) => a.open)).toStrictEqual([false, true]);

    // the switch dies while its recovery retries: the recovery stops (nothing waits on a dead switch) and is carried
    switches = [];
    sw.state.failLoads = 1;
    hook.switchBack({ id: '200', node: 200, incarnation: 4n });
    await hook.idle();
    expect(logger.lines.some((l) => l.includes('the switch is not alive; its restart runs S1–S3 again'))).toBe(true);
    switches = [200];
    hook.switchBack({ id: '200', node: 200, incarnation: 5n });
    await hook.idle();
    expect(hook.admissions.at(-1)).toMatchObject({ node: 200, open: true });
    expect(hook.completed).toHaveLength(2);
  });

  it('a switch that dies before its first-sight recovery ran gets one S1–S3 at its restart, recorded once under it', async () => {
    const sw = fakeSwitch(false);
    sw.state.failLoads = 2; // the first-sight Describe and the recovery's first load: the switch is gone
    const log: string[] = [];
    let switches: NodeId[] = [];
    const { hook, book } = start({ participant: computeNode(1, 5, log), switchControl: sw.control, liveComputeNodes: () => [1], liveSwitches: () => switches });
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    hook.switchJoined({ id: '200', node: 200, incarnation: 2n });
    await hook.idle();
    expect(hook.completed).toHaveLength(0);
    switches = [200];
    hook.switchBack({ id: '200', node: 200, incarnation: 3n });
    await hook.idle();
    expect(hook.completed).toHaveLength(1);
    expect(log).toStrictEqual(['pause 1@9', 'report 1@9', 'apply 1@9', 'resume 1@9']);
    const steps = book.all().flatMap((r) => r.actions.filter((a) => a.protocol === 'fisslock').flatMap((a) => a.steps ?? []));
    expect(steps.map((s) => s.stage)).toStrictEqual(['S1', 'S2', 'S3']);
  });

  it('a stuck-lock report on ctl.report.fiss.stuck runs S1–S3 that frees a lock whose agent lost its holders; reports meanwhile are coalesced, bad ones counted', async () => {
    const sw = fakeSwitch(true);
    // lock 5 is held at the switch by machine 1, whose agent has no holder and nobody waits: stuck
    sw.state.regs.get('fisslock.free')![5] = 0;
    sw.state.regs.get('fisslock.mid')![5] = 2;
    sw.state.regs.get('fisslock.inca')![5] = 9;
    const log: string[] = [];
    const stuckAgent: ServerReport = { machine: 1, agents: [{ lid: 5, machine: 1, mode: 'exclusive', holders: [], wqueue: [], state: 'live' }], clients: [] };
    const participant = (): HookParticipant => ({
      machine: 1,
      policy: 'read-preferring',
      pause: async (epoch) => (log.push(`pause 1@${epoch}`), true),
      report: async (epoch) => (log.push(`report 1@${epoch}`), stuckAgent),
      apply: async (epoch, orders: MachineOrders) => void log.push(`apply 1@${epoch} agents=${orders.agents.length}`),
      resume: async (epoch) => void log.push(`resume 1@${epoch}`),
    });
    const malformed = new MalformedInputCounter({ logger: memoryLogger() });
    const { hook } = start({ participant, switchControl: sw.control, liveComputeNodes: () => [1], malformed, stuckRepairIntervalMs: 60_000 });
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    const stuck = (fields: { machine: number; lock: number; reason: string }) => toBinary(FissStuckLockSchema, create(FissStuckLockSchema, fields));
    nc.publish(subjects.protocolReport('fiss', 'stuck'), Uint8Array.of(0xff, 0xff)); // not a FissStuckLock
    nc.publish(subjects.protocolReport('fiss', 'stuck'), stuck({ machine: 1, lock: 5, reason: 'tired' })); // no such reason
    nc.publish(subjects.protocolReport('fiss', 'stuck'), stuck({ machine: 1, lock: 5, reason: 'agent-without-holders' }));
    nc.publish(subjects.protocolReport('fiss', 'stuck'), stuck({ machine: 2, lock: 5, reason: 'bouncing' })); // lock 5 in repair: dropped
    await nc.flush();
    await waitFor(() => hook.completed.length === 1, { what: 'one repair' });
    await hook.idle();
    nc.publish(subjects.protocolReport('fiss', 'stuck'), stuck({ machine: 1, lock: 6, reason: 'bouncing' })); // right after it: covered
    await nc.flush();
    await waitFor(() => hook.stuck.reports === 3, { what: 'the third report' });
    expect(hook.stuck).toStrictEqual({ reports: 3, repairs: 1, coalesced: 1 });
    expect(hook.triage).toMatchObject({ reports: 3, repairs: 2, droppedBusy: 1 });
    expect(malformed.count(subjects.protocolReport('fiss', 'stuck'))).toBe(2);
    expect(log).toStrictEqual(['pause 1@9', 'report 1@9', 'apply 1@9 agents=0', 'resume 1@9']);
    // the switch closed for the repair and opened after S3; the lock is free again
    expect(hook.admissions).toStrictEqual([
      { node: 0, epoch: 9n, open: false },
      { node: 0, epoch: 9n, open: true },
    ]);
    expect(sw.state.regs.get('fisslock.free')![5]).toBe(1);
    expect(sw.state.regs.get('fisslock.inca')![5]).toBe(0);
  });
});
