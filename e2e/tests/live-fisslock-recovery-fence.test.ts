import { create } from '@bufbuild/protobuf';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { parseRecoveryDetail } from '@lockfabric/coordinator/service';
import { UnaryClient } from '@lockfabric/live';
import { CoordinatorService, RecoveryStage, StatusRequestSchema } from '@lockfabric/wire';
import type { RecoveryPhase } from '@lockfabric/wire';
import { LocalChaos, liveOptions, runLive, tail } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, liveNowNs, metric, nodeOf, switchOpened, waitFor } from './live-chaos-support.js';

// A FissLock compute node paused (SIGSTOP) past its failure detection: the coordinator declares it
// dead and runs S1–S3 over the survivor, which gets its locks. When it resumes (SIGCONT) it hears
// the FailureNotice naming itself and fences its own run (spec §7.1: its holds expired, its pending
// acquires aborted): its clients' waits end with LockAbortedError — the driver's history and its
// failure counts show them — instead of timing out, and its packets were already dropped by the
// switch (its seq window is fenced in S3). Then it rejoins with a new incarnation, ending that run.
const TIMEOUT_MS = 10_000;
const MISSES = 10;
const CS_MS = 150;
/** Two locks for eight clients holding 150 ms each: most clients wait at any moment, the paused node's too. */
const LOCKS = 2;

async function fissSteps(coordinator: ProcessRecord, member: string): Promise<RecoveryPhase[]> {
  const client = new UnaryClient(`127.0.0.1:${coordinator.grpc}`, 5_000);
  try {
    const status = await client.call(CoordinatorService.method.status, create(StatusRequestSchema));
    return status.recoveries.filter((p) => p.protocol === 'fisslock' && p.stage !== RecoveryStage.UNSPECIFIED && parseRecoveryDetail(p.detail)['member'] === member);
  } finally {
    client.close();
  }
}

describe('live chaos: a FissLock node declared dead while paused fences itself when it resumes', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let coordinator: ProcessRecord;

  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock', computeNodes: 2, clientsPerComputeNode: 16, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('SIGSTOP past detection, S1–S3 over the survivor, SIGCONT: its acquires end with LockAbortedError, survivors get every lock, the checker passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const victim = chaos.process('compute-2');
    await switchOpened(cluster.state);
    let opsDone: ((node: number) => number) | undefined;
    const run = runLive({
      state: cluster.state,
      protocol: 'fisslock',
      protocolOptions: liveOptions('fisslock'),
      spec: { clients: 8, locks: LOCKS, readRatio: 0.2, distribution: 'uniform', durationMs: 10_000, thinkNs: 1 * MS, criticalSectionNs: CS_MS * MS, seed: 29, timeoutMs: TIMEOUT_MS },
      tolerateNodeFailures: true,
      beforeNodeStart: async (_node, progress) => void (opsDone = progress.opsDone),
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    // Pause only once both nodes are granting locks (a fixed sleep could pause a starved node
    // before its clients began waiting): with two locks for eight clients, waits are pending then.
    await waitFor(() => (opsDone?.(1) ?? 0) >= 2 && (opsDone?.(victim.node) ?? 0) >= 2, 30_000, 'both compute nodes granting locks');
    const stoppedAtNs = liveNowNs();
    await chaos.pause('compute-2');
    const member = `compute/${victim.node}`;
    let resumedAtNs = Number.POSITIVE_INFINITY;
    try {
      await waitFor(async () => (await fissSteps(coordinator, member)).length === 3, 60_000, 'S1–S3 of the paused node in Status').catch((error: unknown) => {
        throw new Error(`${String(error)}\ncoordinator log:\n${tail(coordinator.log, 30)}`);
      });
    } finally {
      // taken before SIGCONT: the node may record its first abort before this process reads a clock again
      resumedAtNs = liveNowNs();
      await chaos.resume('compute-2');
    }
    const result = await run;
    const steps = await fissSteps(coordinator, member);
    const s3EndNs = Number(parseRecoveryDetail(steps[2]!.detail)['end_ns']);

    // the paused node finished its run and reported its history
    expect(result.failedNodes).toStrictEqual([]);
    const mine = result.history.filter((e) => nodeOf(e) === victim.node);
    const aborted = mine.filter((e) => e.op === 'acquire' && e.phase === 'fail' && e.error === 'LockAbortedError');
    // acquires invoked before the pause that ended with LockAbortedError after the resume: the waits the fence aborted
    const lastInvoke = new Map<string, number>();
    let abortedWaits = 0;
    for (const e of [...mine].sort((x, y) => x.timeNs - y.timeNs)) {
      if (e.op !== 'acquire') continue;
      if (e.phase === 'invoke') lastInvoke.set(e.client, e.timeNs);
      else if (e.phase === 'fail' && e.error === 'LockAbortedError' && (lastInvoke.get(e.client) ?? Infinity) < stoppedAtNs) abortedWaits++;
    }
    console.log(`fenced node ${victim.node}: ${aborted.length} acquires ended with LockAbortedError (${abortedWaits} of them waiting since before the pause); failures by code ${JSON.stringify(result.summary.failuresByCode)}`);
    // The node fenced itself (the FissLock self-fence: waits pending at that moment end with
    // LockAbortedError, a release of a hold from before with LeaseExpiredError) and rejoined with a
    // new incarnation (rejoin-watch.ts), which ends its run: how many typed outcomes its history
    // shows depends on what its clients were doing then (reported above); none is untyped, none
    // is recorded before the resume, and the rejoin always happens.
    // With two locks for eight clients it had waits pending at the pause: they end with LockAbortedError.
    expect(abortedWaits, 'waits pending since before the pause that ended with LockAbortedError').toBeGreaterThan(0);
    expect(aborted.every((e) => e.timeNs >= resumedAtNs)).toBe(true);
    expect(result.summary.failuresByCode['LOCK_ABORTED'] ?? 0).toBeGreaterThanOrEqual(aborted.length);
    const untyped = mine.filter((e) => e.phase === 'fail' && !['LockAbortedError', 'LeaseExpiredError', 'LockTimeoutError'].includes(e.error ?? ''));
    expect(untyped, 'failures of the fenced node without a typed error').toStrictEqual([]);
    await waitFor(async () => (await metric(victim, 'lockfabric_compute_rejoins_total')) >= 1, 60_000, 'compute-2 to rejoin');

    // Declared dead at the pause (spec §7.1): what it believed afterwards is its own; its holds end there.
    const failedClients = Object.fromEntries([...new Set(mine.map((e) => e.client))].map((c) => [c, stoppedAtNs]));
    const judged = result.history.filter((e) => nodeOf(e) !== victim.node || e.timeNs <= stoppedAtNs);
    const verdict = checkHistory(judged, { failedClients, maxWaitNs: (TIMEOUT_MS + 500) * MS });
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    // every lock is granted to the survivor after S3
    const neverGranted = Array.from({ length: LOCKS }, (_, lock) => lock).filter((lock) => !result.history.some((e) => nodeOf(e) !== victim.node && e.lock === lock && e.op === 'acquire' && e.phase === 'ok' && e.timeNs > s3EndNs));
    expect(neverGranted).toStrictEqual([]);
  });
});
