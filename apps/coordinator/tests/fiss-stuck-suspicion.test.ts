import type { NatsConnection } from '@nats-io/transport-node';
import { RecoveryBook } from '@lockfabric/control';
import { protocolRecoveries } from '@lockfabric/lock-catalog';
import type { AgentPool, MachineOrders, ServerReport, StuckReport } from '@lockfabric/lock-catalog';
import { GatedSwitchPort, startFissRecoveryHook, startFissRecoveryResponder, startFissStuckReporter } from '@lockfabric/lock-catalog-control';
import type { FissRecoveryHook, FissRecoveryHookDeps, FissResponder, FissStuckReporter, RecoveryPool } from '@lockfabric/lock-catalog-control';
import { MalformedInputCounter, NatsControlBus, announceSwitchControl, connectNats, createSubjects } from '@lockfabric/live';
import type { NodeId } from '@lockfabric/ports';
import { RealClock } from '@lockfabric/realtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeSwitch, memoryLogger, startNatsServer, waitFor, type NatsServerHandle } from './support.js';

const LID = 3;
const clock = new RealClock();

/**
 * A compute node as its process runs it — the real stuck reporter and S1–S3 responder on NATS —
 * over a stand-in agent pool whose records of lock 3 the test sets: machine 1 holds the lock's
 * agent (holder task 4 of machine 2, task 9 of machine 1 queued); machine 2 either still holds
 * the lock (a long hold) or has no record of it (the holder nobody holds: a stalled queue).
 */
function computeNode(nc: NatsConnection, subjects: ReturnType<typeof createSubjects>, node: NodeId, state: { holding: boolean }) {
  const applied: MachineOrders[] = [];
  const report = (): ServerReport =>
    node === 1
      ? {
          machine: 1,
          agents: [{ lid: LID, machine: 1, mode: 'exclusive', holders: [{ mid: 2, task: 4 }], wqueue: [{ mid: 1, task: 9, mode: 'exclusive' }], state: 'live' }],
          clients: [{ lid: LID, mid: 1, task: 9, mode: 'exclusive', state: 'pending', startNs: 0 }],
        }
      : { machine: 2, agents: [], clients: state.holding ? [{ lid: LID, mid: 2, task: 4, mode: 'exclusive', state: 'granted', startNs: 0 }] : [] };
  let pauses = 0;
  const pool: RecoveryPool = {
    pauseForRecovery: () => void pauses++,
    recoveryReport: report,
    applyRecovery: (orders) => void applied.push(orders),
    lockReport: (lid) => ({ ...report(), agents: report().agents.filter((a) => a.lid === lid), clients: report().clients.filter((c) => c.lid === lid) }),
  };
  const watchdog = { onStuckLock: undefined as ((r: StuckReport) => void) | undefined, dismissStuck: () => undefined };
  const logger = memoryLogger();
  const bus = new NatsControlBus(nc);
  const link = { machine: node, send: () => undefined, onPacket: () => () => undefined };
  const responder: FissResponder = startFissRecoveryResponder({ bus, clock, subjects, node, pool: () => ({ pool, policy: 'read-preferring' }), gate: new GatedSwitchPort(link), logger, malformed: new MalformedInputCounter({ logger }) });
  const reporter: FissStuckReporter = startFissStuckReporter({ bus, clock, subjects, node, pool: () => watchdog as unknown as AgentPool, logger, attachEveryMs: 5 });
  return {
    responder,
    applied,
    pauses: () => pauses,
    /** The pool's T_STUCK watchdog flags lock 3's queue as stalled. */
    flagStalled: () => watchdog.onStuckLock?.({ lid: LID, reason: 'stalled-queue', atNs: 0 }),
    attached: () => watchdog.onStuckLock !== undefined,
    close: () => {
      responder.close();
      reporter.close();
    },
  };
}

describe('FissLock stalled-queue suspicion: compute node → coordinator → lock-report calls → S1–S3 only if confirmed', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let hook: FissRecoveryHook | undefined;
  const closers: (() => void)[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connectNats({ servers: nats.url, name: 'fiss-suspicion-test', logger: memoryLogger() });
  });
  afterEach(() => {
    hook?.close();
    hook = undefined;
    for (const close of closers.splice(0)) close();
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  /** The coordinator's real recovery hook over NATS, its switch announced; `live` are the compute nodes it holds alive. */
  async function startHook(subjects: ReturnType<typeof createSubjects>, live: () => NodeId[], extra: Pick<FissRecoveryHookDeps, 'switchControl'> & Partial<FissRecoveryHookDeps>) {
    const logger = memoryLogger();
    const started = startFissRecoveryHook({
      bus: new NatsControlBus(nc),
      subjects,
      logger,
      clock,
      recoveries: new RecoveryBook({ protocols: protocolRecoveries() }),
      malformed: new MalformedInputCounter({ logger }),
      epoch: () => 9n,
      liveComputeNodes: live,
      settleMs: 1,
      announceWaitMs: 2_000,
      attempts: { culpritAttempts: 2, retryDelayMs: 5, maxRetryDelayMs: 20 },
      ...extra,
    });
    hook = started;
    await announceSwitchControl(nc, subjects, 0, '127.0.0.1:1');
    return { hook: started, logger };
  }

  it('a long hold is not repaired, nor a suspicion some node leaves unanswered; a stalled queue is confirmed and repaired', async () => {
    const subjects = createSubjects('fiss-suspicion');
    const state = { holding: true };
    const nodes = [computeNode(nc, subjects, 1, state), computeNode(nc, subjects, 2, state)];
    for (const n of nodes) closers.push(n.close);
    let live: NodeId[] = [1, 2];
    const sw = fakeSwitch(true);
    const { hook: h, logger } = await startHook(subjects, () => live, { switchControl: sw.control, callTimeoutMs: 500 });
    await waitFor(() => nodes.every((n) => n.attached()), { what: 'the reporters attached to their pools' });
    const lockReports = (): number[] => nodes.map((n) => n.responder.answered['lock-report']);

    // machine 2's client still holds the lock: a long hold, dismissed; nobody was paused
    nodes[0]!.flagStalled();
    await waitFor(() => h.triage.dismissed === 1, { what: 'the long hold dismissed' });
    expect(lockReports()).toStrictEqual([1, 1]);
    expect(nodes.map((n) => [n.pauses(), n.responder.phase])).toStrictEqual([
      [0, 'idle'],
      [0, 'idle'],
    ]);

    // a live node that does not answer (no responder on node 5): no repair
    state.holding = false;
    live = [1, 2, 5];
    nodes[0]!.flagStalled();
    await waitFor(() => h.triage.unanswered === 1, { what: 'the unanswered confirmation' });
    expect(logger.lines.some((l) => /lock 3 \(stalled-queue, flagged by compute node 1\): not confirmed, no repair; unanswered: 5 /.test(l))).toBe(true);

    // nobody holds task 4 of machine 2 any more: confirmed, one S1–S3 over both nodes
    live = [1, 2];
    nodes[0]!.flagStalled();
    await waitFor(() => h.completed.length === 1, { what: 'the repair' });
    await h.idle();
    expect(h.triage).toMatchObject({ reports: 3, suspicions: 3, repairs: 1, dismissed: 1, unanswered: 1 });
    expect(h.stuck).toStrictEqual({ reports: 3, repairs: 1, coalesced: 0 });
    expect(nodes.map((n) => n.pauses())).toStrictEqual([1, 1]);
    // S2 rebuilt lock 3 around the waiter: the holder nobody held is gone, task 9 of machine 1 woken
    const orders = nodes[0]!.applied[0]!;
    expect(orders.agents.flatMap((a) => a.holders.map((x) => `${x.mid}:${x.task}`))).not.toContain('2:4');
    expect(orders.wake).toContainEqual(expect.objectContaining({ lid: LID, mid: 1, task: 9 }));
  }, 30_000);

  it('mutantRepairSuspicionUnconfirmed: the long hold is repaired (every node paused) without a lock-report call', async () => {
    const subjects = createSubjects('fiss-suspicion-mutant');
    const nodes = [computeNode(nc, subjects, 1, { holding: true }), computeNode(nc, subjects, 2, { holding: true })];
    for (const n of nodes) closers.push(n.close);
    const { hook: h } = await startHook(subjects, () => [1, 2], { switchControl: fakeSwitch(true).control, mutantRepairSuspicionUnconfirmed: true });
    await waitFor(() => nodes.every((n) => n.attached()), { what: 'the reporters attached to their pools' });
    nodes[0]!.flagStalled();
    await waitFor(() => h.completed.length === 1, { what: 'the (wrong) repair' });
    await h.idle();
    expect(nodes.map((n) => [n.pauses(), n.responder.answered['lock-report']])).toStrictEqual([
      [1, 0],
      [1, 0],
    ]);
  }, 30_000);
});
