import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { parseRecoveryDetail } from '@lockfabric/coordinator/service';
import { RecoveryStage } from '@lockfabric/wire';
import { LocalChaos, liveOptions, runLive, tail } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, liveNowNs, metric, sleep, waitFor } from './live-chaos-support.js';
import { actionWords, fissPhases, holdsAcross, stepsOf } from './fiss-recovery-support.js';

// Recovery across a coordinator outage: the switch-dataplane restarts while the coordinator is down. It comes back
// closed with empty registers and zeroed seq windows; the restarted coordinator, which remembers
// nothing, must see from the switch's Describe that it was never opened since it started, and run
// FissLock's S1–S3 over the compute nodes (which still hold the locks) before opening it. Opened
// "on first sight" instead (the old behaviour, tried against this test), the switch knows neither
// the held locks nor the nodes' links: every packet of theirs lands in its seq gap, and not one
// acquire is granted after the coordinator is back (10 LockTimeoutErrors, 0 grants in that run).
const TIMEOUT_MS = 12_000;
/** Heartbeats every 100 ms; dead after this many misses (a loaded 2-core machine stalls event loops). */
const MISSES = 10;
/** Long enough that locks granted before the outage are still held when the new coordinator's S1 runs. */
const HOLD_MS = 9_000;

describe('live chaos: the switch restarts while the coordinator is down (FissLock)', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;

  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock', computeNodes: 2, clientsPerComputeNode: 16, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('kill the coordinator, kill and restart the switch, restart the coordinator: S1–S3 run before the switch opens, held locks stay held, the checker passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    const switchRecord = chaos.process('switch');
    // The driver starts a switch run only once the coordinator opened the switch (its first sight);
    // wait for that here, so the run's agents exist when the coordinator is killed below.
    await waitFor(async () => (await metric(switchRecord, 'lockfabric_switch_admission_open')) === 1, 30_000, 'the switch opened by the first coordinator');
    let opsDone: ((node: number) => number) | undefined;
    const run = runLive({
      state: cluster.state,
      protocol: 'fisslock',
      protocolOptions: liveOptions('fisslock'),
      // few locks for the clients: after the outage most acquires ask for a lock someone held across it
      spec: { clients: 8, locks: 12, readRatio: 0.25, distribution: 'uniform', durationMs: 18_000, thinkNs: 0, criticalSectionNs: HOLD_MS * MS, seed: 29, timeoutMs: TIMEOUT_MS },
      beforeNodeStart: async (_node, progress) => void (opsDone = progress.opsDone),
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    // The outage starts once both nodes hold locks (9 s holds: a grant is a hold across it), not
    // after a fixed sleep that a starved node may not have used to start its run.
    await waitFor(() => (opsDone?.(1) ?? 0) >= 1 && (opsDone?.(2) ?? 0) >= 1, 30_000, 'both compute nodes holding locks');
    await chaos.kill(coordinator.name);
    const switchKilledAtNs = liveNowNs();
    await chaos.kill(switchRecord.name);
    await sleep(300);
    await chaos.restart(switchRecord.name); // back closed, registers empty; nobody to recover it
    // Taken before the restart: the new coordinator can start S1 before restart() has returned.
    const coordinatorBackAtNs = liveNowNs();
    await chaos.restart(coordinator.name);
    const member = `switch/${switchRecord.node}`;
    await waitFor(async () => stepsOf(await fissPhases(coordinator), member).length === 3, 60_000, 'S1–S3 of the switch in the restarted coordinator\'s Status').catch((error: unknown) => {
      throw new Error(`${String(error)}\ncoordinator log:\n${tail(chaos.process(coordinator.name).log, 30)}`);
    });
    const result = await run;

    const steps = stepsOf(await fissPhases(coordinator), member);
    expect(steps.map((s) => s.stage)).toStrictEqual([RecoveryStage.S1, RecoveryStage.S2, RecoveryStage.S3]);
    const [s1, s2, s3] = steps.map(actionWords);
    const took = steps.map((s) => Number(parseRecoveryDetail(s.detail)['took_ns']) / MS);
    console.log(`fisslock recovery by the restarted coordinator: ${steps.map((s, i) => `${['S1', 'S2', 'S3'][i]} ${took[i]?.toFixed(1)} ms (${s.detail.split('action=')[1]})`).join(', ')}`);
    expect(steps.every((s) => Number(parseRecoveryDetail(s.detail)['start_ns']) >= coordinatorBackAtNs)).toBe(true);
    // both compute nodes took part, and the locks they held across the outage are agents and registers again
    expect(s1?.['survivors']).toBe(2);
    expect(s2?.['held']).toBeGreaterThanOrEqual(1);
    expect(s3?.['registers']).toBeGreaterThanOrEqual(3 * (s2?.['held'] ?? 0));

    // the run completed on both nodes; no lock had two holders (what an empty switch opened at once would allow)
    expect(result.failedNodes).toStrictEqual([]);
    expect(result.verdict?.violations).toStrictEqual([]);
    expect(result.verdict?.ok, result.verdict ? summarizeVerdict(result.verdict) : 'no verdict').toBe(true);
    expect(checkHistory(result.history, { maxWaitNs: (TIMEOUT_MS + 500) * MS }).ok).toBe(true);
    expect(holdsAcross(result.history, switchKilledAtNs, coordinatorBackAtNs)).toBeGreaterThanOrEqual(1);
    expect(result.history.some((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > coordinatorBackAtNs)).toBe(true);
    // and the switch serves again: an acquire asked for after S3 ends granted (its wait is at most one
    // 9 s hold, below the 12 s timeout), never timed out for want of a switch that decides
    const s3EndNs = Number(parseRecoveryDetail(steps[2]!.detail)['end_ns']);
    const askedAt = new Map<string, number>();
    const timedOutAfterS3: string[] = [];
    for (const e of result.history) {
      if (e.op !== 'acquire') continue;
      if (e.phase === 'invoke') askedAt.set(e.client, e.timeNs);
      else if (e.phase === 'fail' && (askedAt.get(e.client) ?? 0) > s3EndNs && e.error === 'LockTimeoutError') timedOutAfterS3.push(`${e.client}#${e.lock}`);
    }
    expect(timedOutAfterS3).toStrictEqual([]);
    console.log(`after the coordinator came back: ${result.history.filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > coordinatorBackAtNs).length} grants; failures by code over the run ${JSON.stringify(result.summary.failuresByCode)}`);

    // the switch was opened by the recovery, at the new coordinator's epoch
    const restarted = chaos.process(switchRecord.name);
    expect(await metric(restarted, 'lockfabric_switch_admission_open')).toBe(1);
    expect(await metric(restarted, 'lockfabric_switch_admission_epoch')).toBeGreaterThan(1);
  });
});
