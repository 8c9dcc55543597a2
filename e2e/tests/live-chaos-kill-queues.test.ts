import { readFileSync } from 'node:fs';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { announceLockTable, queueRecoverySubject } from '@lockfabric/coordinator/service';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { QueueRecoveryReplySchema, QueueRecoveryRequestSchema } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, grantsAfter, liveNowNs, longestGrantGapNs, metric, nodeOf, sleep, survivorsOf, waitFor } from './live-chaos-support.js';

// SIGKILL a compute node whose clients hold and wait for mcs (then alock) locks, in one cluster of
// real processes with a coordinator. The coordinator's queue-lock recovery (apps/coordinator
// queue-lock-recovery) gates the survivor, waits until it holds nothing, aborts its waiters
// (LockAbortedError), zeroes the lock table through it and resumes. compute-2 is restarted between
// the protocols. README of libs/locks/mcs, "Failures".
const TIMEOUT_MS = 1_500;
const WAIT_SLACK_MS = 300;
const CLIENTS = 8;
/** Heartbeats every 100 ms; 10 misses so a survivor stalled by the loaded machine is not taken for dead. */
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
/** A survivor's release may wait this long for a dead successor's link before it cuts the queue. */
const LINK_TIMEOUT_MS = 200;
/** The recovery's own calls and scheduling slack on a shared 2-core machine. */
const RECOVERY_SLACK_MS = 900;
const LOCKS = 3;
const KILL_AFTER_MS = 900;

const cases = [
  { protocol: 'mcs', options: { releaseLinkTimeoutNs: String(LINK_TIMEOUT_MS * MS) } },
  { protocol: 'alock', options: { releaseLinkTimeoutNs: String(LINK_TIMEOUT_MS * MS) } },
];

describe('live chaos: SIGKILL a compute node holding queue locks (mcs, alock), coordinator-driven recovery', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  let memory: ProcessRecord;
  let coordinator: ProcessRecord;
  const figures: string[] = [];

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    memory = cluster.state.processes.find((p) => p.role === 'memory')!;
    coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-chaos-queues', logger: silentLogger });
  });
  afterAll(async () => {
    if (figures.length > 0) console.log(`queue-lock recovery after SIGKILL of compute-2:\n${figures.join('\n')}`);
    await nc?.close();
    await cluster?.stop();
  });

  it.each(cases)('$protocol: the dead node\'s locks are granted again after detection + recovery; the history passes; no acquire waits past its timeout', async ({ protocol, options }) => {
    const chaos = new LocalChaos(cluster.dir);
    const victim = chaos.process('compute-2');
    await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 0, 15_000, 'memory node admits compute-2 again');
    await announceLockTable(nc, createSubjects(cluster.state.cluster), protocol, LOCKS);
    const run = runLive({
      state: cluster.state,
      protocol,
      protocolOptions: options,
      spec: { clients: CLIENTS, locks: LOCKS, readRatio: 0, distribution: 'uniform', durationMs: 3_500, thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 23, timeoutMs: TIMEOUT_MS },
      tolerateNodeFailures: true,
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    await sleep(KILL_AFTER_MS);
    const killedAtNs = liveNowNs();
    await chaos.kill('compute-2');
    try {
      const result = await run;
      expect(result.failedNodes.map((f) => f.node)).toStrictEqual([victim.node]);
      const survivors = survivorsOf(result, victim.node);
      expect(new Set(survivors.map(nodeOf))).toStrictEqual(new Set([1]));
      const failedClients = Object.fromEntries(Array.from({ length: CLIENTS / 2 }, (_, i) => [`${victim.node}/${i}`, killedAtNs]));
      const verdict = checkHistory(survivors, { failedClients, maxWaitNs: (TIMEOUT_MS + WAIT_SLACK_MS) * MS });
      expect(verdict.ok, `${protocol}\n${summarizeVerdict(verdict)}`).toBe(true);
      const ends = survivors.filter((e) => e.op === 'acquire' && e.phase !== 'invoke');
      expect(ends.filter((e) => e.phase === 'fail' && !e.error).length, 'failures without a typed error').toBe(0);

      // The coordinator ran the recovery and reset the queues (its log says how long each step took).
      const line = await recoveryLine(protocol);
      expect(line).toMatch(/queues reset/);
      const grants = grantsAfter(survivors, killedAtNs);
      const firsts = Array.from({ length: LOCKS }, (_, lock) => ((grants.get(lock)?.[0] ?? Infinity) - killedAtNs) / MS);
      // A lock the dead node held or queued on is blocked from some point after the kill until the
      // recovery: the longest stretch without a grant shows it; and every lock is granted after it.
      const gaps = Array.from({ length: LOCKS }, (_, lock) => longestGrantGapNs(grants.get(lock) ?? [], killedAtNs) / MS);
      const lasts = Array.from({ length: LOCKS }, (_, lock) => ((grants.get(lock)?.at(-1) ?? killedAtNs) - killedAtNs) / MS);
      const steps = line.replace(/^.*queues reset; /, '');
      const ms = (values: number[]) => values.map((v) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : 'never')).join(', ');
      figures.push(`${protocol.padEnd(6)} first grant after the kill: ${ms(firsts)}; longest gap without a grant: ${ms(gaps)}; coordinator: ${steps}`);
      const boundMs = DETECTION_MS + LINK_TIMEOUT_MS + RECOVERY_SLACK_MS;
      for (let lock = 0; lock < LOCKS; lock++) {
        expect(firsts[lock], `${protocol}: first survivor grant of lock ${lock} after the kill`).toBeLessThanOrEqual(boundMs);
        expect(gaps[lock], `${protocol}: longest stretch without a grant of lock ${lock} after the kill`).toBeLessThanOrEqual(boundMs);
        expect(lasts[lock], `${protocol}: lock ${lock} granted after detection (after the recovery)`).toBeGreaterThan(DETECTION_MS);
      }
    } finally {
      await chaos.restart('compute-2');
    }
  });

  it('a compute node answers malformed and stale recovery calls with an error and keeps serving', async () => {
    const subjects = createSubjects(cluster.state.cluster);
    const ask = async (verb: 'gate' | 'abort', data: Uint8Array) => fromBinary(QueueRecoveryReplySchema, (await nc.request(queueRecoverySubject(subjects, 1, verb), data, { timeout: 5_000 })).data);
    expect((await ask('gate', new Uint8Array([0xff, 0xff, 0xff]))).error).toMatch(/malformed/);
    // the recoveries above ran in later epochs than 1
    expect((await ask('abort', toBinary(QueueRecoveryRequestSchema, create(QueueRecoveryRequestSchema, { epoch: 1n })))).error).toMatch(/older/);
    const current = (await ask('abort', toBinary(QueueRecoveryRequestSchema, create(QueueRecoveryRequestSchema, { epoch: 1n })))).epoch;
    // not gated: an abort is refused, nothing happens to the node's clients
    expect((await ask('abort', toBinary(QueueRecoveryRequestSchema, create(QueueRecoveryRequestSchema, { epoch: current })))).error).toMatch(/gate first/);
  });

  /** The coordinator's log line about the queue-lock recovery of `protocol` (the newest one). */
  async function recoveryLine(protocol: string): Promise<string> {
    let found: string | undefined;
    await waitFor(
      () => {
        const lines = readFileSync(coordinator.log, 'utf8').split('\n').filter((l) => l.includes(`queue-lock recovery (${protocol}) after compute/`));
        found = lines.at(-1);
        return found !== undefined;
      },
      10_000,
      `coordinator log: queue-lock recovery of ${protocol}`,
    );
    return found ?? '';
  }
});
