import { fromBinary } from '@bufbuild/protobuf';
import { checkHistory, clipExpiredLeases, summarizeVerdict } from '@lockfabric/check';
import { announceLockTable } from '@lockfabric/coordinator/service';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { protocolById } from '@lockfabric/lock-catalog';
import { RecoveryPhaseSchema } from '@lockfabric/wire';
import type { RecoveryPhase } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, dslrLiveOptions, grantsAfter, liveNowNs, metric, nodeOf, runProgress, survivorsOf, waitFor } from './live-chaos-support.js';

// SIGKILL a compute node whose clients hold locks, once per RDMA protocol, in one cluster of real
// processes with a coordinator; compute-2 is restarted (a new incarnation, admitted again) between
// protocols. dslr has its own, longer test (live-chaos-kill.test.ts); the switch family needs a
// switch-dataplane and is not covered here; mcs and alock (coordinator-driven recovery) have
// theirs: live-chaos-kill-queues.test.ts. README of apps/coordinator.
const TIMEOUT_MS = 1_500;
const WAIT_SLACK_MS = 300;
/** Scheduling slack on a shared 2-core machine, on top of each protocol's own bound. */
const SLACK_MS = 700;
const CLIENTS = 8;
/** Heartbeats every 100 ms; 10 misses (not the default 3) so a survivor stalled by the loaded machine is not taken for dead. */
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
const LOCKS = 3;
/** Acquires each compute node has reported before the kill: its clients are running and holding locks. */
const STARTED_OPS = 10;

/** Waiters reset after 100 ms (live holds are slower than RDMA); resets learn of dead nodes from the coordinator's notice. */
const DECLOCK_ACQUIRE_TIMEOUT_MS = 100;
/** compute-1's timeout stagger (acquireTimeoutStaggerNs 1 ms × node index 1). */
const DECLOCK_STAGGER_MS = 1;
const DECLOCK_OPTIONS = { acquireTimeoutNs: String(DECLOCK_ACQUIRE_TIMEOUT_MS * MS) };
/**
 * DecLock: a survivor waiting behind the dead node's members times out and resets the lock; the
 * reset finishes once every live node acknowledged and the notice named compute-2 dead, so a lock
 * whose waiter was already resetting is back at detection. A lock first wanted after the notice
 * (its survivors were blocked on another dead lock) still costs that waiter's timeout, and with
 * three locks a client can meet that twice in a row. libs/locks/declock/README.md, "When a compute node dies".
 */
const DECLOCK_BOUND_MS = DETECTION_MS + 2 * (DECLOCK_ACQUIRE_TIMEOUT_MS + DECLOCK_STAGGER_MS) + SLACK_MS;

interface Case {
  readonly protocol: string;
  readonly options: Record<string, string>;
  /** How the dead holder's locks come back, and by when after the kill (ms); undefined: they may not. */
  readonly boundMs: number | undefined;
}

const cases: Case[] = [
  // Fenced by the memory node, then its holder tags are CASed to free.
  { protocol: 'caslock', options: {}, boundMs: DETECTION_MS + SLACK_MS },
  // Write words of the dead machine freed after fencing; read leases (50 ms live) run out.
  { protocol: 'drtm', options: { leaseNs: '50000000', driftNs: '1000000', txMarginNs: '20000000' }, boundMs: DETECTION_MS + 50 + SLACK_MS },
  // Lease: waiters skip a stalled ticket after 2λ (+ a poll of λ/2), λ = 200 ms. Several of the
  // victim's tickets can sit ahead on one lock (a shared skip leaves dead reader slots for the next
  // writer, dslr spec §6.4), each skipped after its own stall: bound three of them (observed 1.2–1.6 s).
  { protocol: 'dslr-backoff', options: dslrLiveOptions, boundMs: 3 * 500 + SLACK_MS },
  // Lease: RelCnt watch after 3·T_lease, then the era-fenced reset of the memory-node recovery server.
  { protocol: 'shiftlock', options: {}, boundMs: 30 + SLACK_MS },
  // A waiter that times out (acquireTimeoutNs) resets the lock; the reset finishes past the dead
  // node's members at the coordinator's notice (its RESET_ACKs come from the live nodes only).
  { protocol: 'declock', options: DECLOCK_OPTIONS, boundMs: DECLOCK_BOUND_MS },
  { protocol: 'declock-cql', options: DECLOCK_OPTIONS, boundMs: DECLOCK_BOUND_MS },
  // mcs and alock: live-chaos-kill-queues.test.ts (gate, drain, abort, table reset by the coordinator).
];

describe('live chaos: SIGKILL a compute node holding locks, every RDMA protocol', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  let memory: ProcessRecord;
  const reports: RecoveryPhase[] = [];
  const figures: string[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-chaos-protocols', logger: silentLogger });
    nc.subscribe(createSubjects(cluster.state.cluster).recovery('phase'), {
      callback: (error, msg) => {
        if (!error) reports.push(fromBinary(RecoveryPhaseSchema, msg.data));
      },
    });
    await nc.flush();
  });
  afterAll(async () => {
    if (figures.length > 0) console.log(`first survivor grant per lock after SIGKILL of compute-2:\n${figures.join('\n')}`);
    await nc?.close();
    await cluster?.stop();
  });

  it.each(cases)('$protocol: survivors go on, the history passes, no acquire waits past its timeout', async ({ protocol, options, boundMs }) => {
    const chaos = new LocalChaos(cluster.dir);
    const victim = chaos.process('compute-2');
    const subjects = createSubjects(cluster.state.cluster);
    // compute-2 of the previous case was restarted: wait until the memory node admits it again.
    await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 0, 60_000, 'memory node admits compute-2 again');
    await announceLockTable(nc, subjects, protocol, LOCKS);
    const clearedBefore = await metric(memory, 'lockfabric_memory_dead_holds_cleared_total');
    const progress = runProgress();
    const run = runLive({
      state: cluster.state,
      protocol,
      protocolOptions: options,
      spec: { clients: CLIENTS, locks: LOCKS, readRatio: protocolById(protocol).modes.includes('shared') ? 0.3 : 0, distribution: 'uniform', durationMs: 3_000, thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 17, timeoutMs: TIMEOUT_MS },
      tolerateNodeFailures: true,
      beforeNodeStart: progress.beforeNodeStart,
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    // Kill only once both nodes are granting locks: a fixed sleep could land before a starved
    // compute-2 (restarted by the previous case) began its part, or while it still prepared.
    await progress.untilRunning([1, victim.node], STARTED_OPS, run);
    const killedAtNs = liveNowNs();
    await chaos.kill('compute-2');
    try {
      await checkCase(protocol, boundMs, victim.node, killedAtNs, await run, clearedBefore);
    } finally {
      // Bring compute-2 back for the next case: a new incarnation, which the memory node admits
      // again. A survivor wrongly declared dead on this loaded machine is fenced for good too and
      // must restart the same way: fencing cannot tell slow from dead.
      const fenced = new Set([victim.node, ...reports.map((r) => r.node)]);
      reports.length = 0;
      for (const node of fenced) await chaos.restart(`compute-${node}`);
    }
  });

  async function checkCase(protocol: string, boundMs: number | undefined, victimNode: number, killedAtNs: number, result: Awaited<ReturnType<typeof runLive>>, clearedBefore: number): Promise<void> {
    const victim = { node: victimNode };
    expect(result.failedNodes.map((f) => f.node), JSON.stringify(result.failedNodes)).toStrictEqual([victim.node]);
    const survivors = survivorsOf(result, victim.node);
    expect(new Set(survivors.map(nodeOf))).toStrictEqual(new Set([1]));
    const failedClients = Object.fromEntries(Array.from({ length: CLIENTS / 2 }, (_, i) => [`${victim.node}/${i}`, killedAtNs]));
    // Lease safety: a hold whose release reported LeaseExpiredError counts only up to its grant.
    const verdict = checkHistory(clipExpiredLeases(survivors, 0), { failedClients, maxWaitNs: (TIMEOUT_MS + WAIT_SLACK_MS) * MS });
    expect(verdict.ok, `${protocol}\n${summarizeVerdict(verdict)}`).toBe(true);
    // Every survivor acquire ended: granted, or failed with a typed error (a timeout at the latest).
    const ends = survivors.filter((e) => e.op === 'acquire' && e.phase !== 'invoke');
    expect(ends.filter((e) => e.phase === 'fail' && !e.error).length, 'failures without a typed error').toBe(0);

    // The memory node fenced compute-2 and reported on ctl.recovery.phase (for every protocol).
    await waitFor(async () => reports.some((r) => r.node === victim.node && r.protocol === protocol), 30_000, `${protocol}: recovery report of the memory node`);
    const cleared = (await metric(memory, 'lockfabric_memory_dead_holds_cleared_total')) - clearedBefore;

    const grants = grantsAfter(survivors, killedAtNs);
    const firsts = Array.from({ length: LOCKS }, (_, lock) => ((grants.get(lock)?.[0] ?? Infinity) - killedAtNs) / MS);
    figures.push(`${protocol.padEnd(12)} ${firsts.map((ms) => (Number.isFinite(ms) ? `+${ms.toFixed(0)} ms` : 'never')).join(', ')}${cleared > 0 ? ` (memory node freed ${cleared} word(s))` : ''}`);
    if (boundMs !== undefined) {
      for (const [lock, firstMs] of firsts.entries()) expect(firstMs, `${protocol}: first survivor grant of lock ${lock} after the kill`).toBeLessThanOrEqual(boundMs);
    }
  }
});
