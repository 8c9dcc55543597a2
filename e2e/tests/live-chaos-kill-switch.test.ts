import { fromBinary } from '@bufbuild/protobuf';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { FailureNoticeSchema } from '@lockfabric/wire';
import type { FailureNotice } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, grantsAfter, liveNowNs, metric, nodeOf, runProgress, survivorsOf, switchOpened, waitFor } from './live-chaos-support.js';

// SIGKILL a compute node whose clients hold locks, for the server-based switch-family managers
// (srvlock, parlock), in one cluster of real processes with a switch-dataplane (forward program)
// and a coordinator. The lock servers drop the dead node's holds and queued requests when the
// coordinator's FailureNotice arrives (apps/compute-node failure-feed.ts → LockServer). compute-3
// is the victim of the first two cases: srvlock's server is compute-1 (the lowest), which
// survives; for parlock, compute-3 also hosted the partition manager of the locks homed there
// (lock mod 3 = 2), which move to compute-1 (the next live node) once it reclaimed the survivors'
// holds: they come back within the same bound (libs/locks/srvlock/README.md, "Failover"). The
// third case kills srvlock's server itself: every lock moves to compute-2, which first reclaims
// compute-3's holds and its own clients', then serves. NetLock has its own test (live-chaos-kill-switch-locks.test.ts): its hot
// locks sit in switch queues, which the coordinator has the switch purge of the dead node.
const TIMEOUT_MS = 1_500;
/** An acquire that times out waits one retransmit interval for its withdrawal, plus scheduling. */
const WAIT_SLACK_MS = 300;
/** Scheduling slack on a shared 2-core machine, on top of detection. */
const SLACK_MS = 700;
const COMPUTE_NODES = 3;
const CLIENTS = 9;
/** Heartbeats every 100 ms; 10 misses so a survivor stalled by the loaded machine is not taken for dead. */
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
const LOCKS = 3;
/** Acquires each compute node has reported before the kill: its clients are running and holding locks. */
const STARTED_OPS = 10;
/** Live retransmits sized for NATS round trips; a release to a dead home gives up after 25 × 20 ms. */
const OPTIONS = { retransmitNs: '20000000', maxAttempts: '25' };

interface Case {
  readonly protocol: string;
  /** The compute node killed. */
  readonly victim: number;
  /** Locks whose manager died with the victim: not expected back. */
  readonly lost: readonly number[];
  /** Locks homed on the victim whose manager fails over to a survivor: granted again after the notice. */
  readonly moved: readonly number[];
}

const cases: Case[] = [
  { protocol: 'srvlock', victim: 3, lost: [], moved: [] },
  { protocol: 'parlock', victim: 3, lost: [], moved: [2] },
  { protocol: 'srvlock', victim: 1, lost: [], moved: [0, 1, 2] },
];

describe('live chaos: SIGKILL a compute node holding locks, server-based switch protocols', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  let memory: ProcessRecord;
  const notices: { notice: FailureNotice; atNs: number }[] = [];
  const figures: string[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: true, switchProgram: 'forward', computeNodes: COMPUTE_NODES, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-chaos-switch', logger: silentLogger });
    nc.subscribe(createSubjects(cluster.state.cluster).recovery('failure'), {
      callback: (error, msg) => {
        if (!error) notices.push({ notice: fromBinary(FailureNoticeSchema, msg.data), atNs: liveNowNs() });
      },
    });
    await nc.flush();
  }, 120_000);
  afterAll(async () => {
    if (figures.length > 0) console.log(`first survivor grant per lock after the SIGKILL:\n${figures.join('\n')}`);
    await nc?.close();
    await cluster?.stop();
  });

  it.each(cases)('$protocol, compute-$victim killed: survivors go on, the dead node’s locks come back, the history passes', async ({ protocol, victim, lost, moved }) => {
    const chaos = new LocalChaos(cluster.dir);
    // The previous case's victim was restarted: wait until the memory node admits it again.
    await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 0, 15_000, 'memory node admits the last victim again');
    notices.length = 0;
    await switchOpened(cluster.state);
    const progress = runProgress();
    const run = runLive({
      state: cluster.state,
      protocol,
      protocolOptions: OPTIONS,
      spec: { clients: CLIENTS, locks: LOCKS, readRatio: 0.3, distribution: 'uniform', durationMs: 3_500, thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 23, timeoutMs: TIMEOUT_MS },
      tolerateNodeFailures: true,
      beforeNodeStart: progress.beforeNodeStart,
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    await progress.untilRunning([1, 2, 3], STARTED_OPS, run);
    const killedAtNs = liveNowNs();
    await chaos.kill(`compute-${victim}`);
    try {
      const result = await run;
      expect(result.failedNodes.map((f) => f.node)).toStrictEqual([victim]);
      const survivors = survivorsOf(result, victim);
      expect(new Set(survivors.map(nodeOf))).toStrictEqual(new Set([1, 2, 3].filter((n) => n !== victim)));
      const failedClients = Object.fromEntries(Array.from({ length: CLIENTS }, (_, i) => [`${victim}/${i}`, killedAtNs]));
      const verdict = checkHistory(survivors, { failedClients, maxWaitNs: (TIMEOUT_MS + WAIT_SLACK_MS) * MS });
      expect(verdict.ok, `${protocol}\n${summarizeVerdict(verdict)}`).toBe(true);
      // Every survivor acquire ended: granted, or failed with a typed error (a timeout at the latest).
      const ends = survivors.filter((e) => e.op === 'acquire' && e.phase !== 'invoke');
      expect(ends.filter((e) => e.phase === 'fail' && !e.error).length, 'failures without a typed error').toBe(0);

      // The coordinator declared the victim dead (and only it).
      const declared = notices.filter((n) => n.notice.role === 'compute');
      expect(declared.map((n) => n.notice.node)).toContain(victim);
      const grants = grantsAfter(survivors, killedAtNs);
      const firsts = Array.from({ length: LOCKS }, (_, lock) => ((grants.get(lock)?.[0] ?? Infinity) - killedAtNs) / MS);
      const noticeMs = ((declared.find((n) => n.notice.node === victim)?.atNs ?? Infinity) - killedAtNs) / MS;
      figures.push(`${protocol.padEnd(8)} compute-${victim} killed, notice +${noticeMs.toFixed(0)} ms; ${firsts.map((ms, lock) => `lock ${lock}: ${Number.isFinite(ms) ? `+${ms.toFixed(0)} ms` : 'never'}${lost.includes(lock) ? ' (homed on the victim)' : ''}`).join(', ')}`);
      for (const [lock, firstMs] of firsts.entries()) {
        if (lost.includes(lock)) continue;
        expect(firstMs, `${protocol}: first survivor grant of lock ${lock} after the kill`).toBeLessThanOrEqual(DETECTION_MS + SLACK_MS);
      }
      // Locks homed on the victim that moved: a grant from before the kill may land after it, so ask
      // for one after the notice too (from the new home, which reclaimed the survivors' holds first).
      for (const lock of moved) {
        const afterNotice = grantsAfter(survivors, killedAtNs + noticeMs * MS).get(lock)?.[0] ?? Infinity;
        expect((afterNotice - killedAtNs) / MS, `${protocol}: first survivor grant of moved lock ${lock} after the notice`).toBeLessThanOrEqual(noticeMs + SLACK_MS);
      }
      // Locks homed on the victim: every survivor acquire of them invoked after the notice ends in a timeout.
      if (lost.length > 0) {
        const noticeAtNs = killedAtNs + noticeMs * MS;
        const invokedAt = new Map<string, number>();
        const lateLost: string[] = [];
        for (const e of [...survivors].sort((a, b) => a.timeNs - b.timeNs)) {
          if (e.op !== 'acquire') continue;
          if (e.phase === 'invoke') invokedAt.set(e.client, e.timeNs);
          else if (lost.includes(e.lock) && (invokedAt.get(e.client) ?? 0) > noticeAtNs) lateLost.push(e.phase === 'ok' ? 'granted' : (e.error ?? 'untyped'));
        }
        expect(lateLost.length, `${protocol}: survivors asked for the lost locks after the notice`).toBeGreaterThan(0);
        expect(new Set(lateLost), `${protocol}: acquires of locks homed on the victim`).toStrictEqual(new Set(['LockTimeoutError']));
      }
    } finally {
      // Bring the victim back for the next case (a new incarnation); a survivor wrongly declared
      // dead on this loaded machine is fenced for good too and must restart the same way.
      const fenced = new Set([victim, ...notices.filter((n) => n.notice.role === 'compute').map((n) => n.notice.node)]);
      for (const node of fenced) await chaos.restart(`compute-${node}`);
    }
  });
});
