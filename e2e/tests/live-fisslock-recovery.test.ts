import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { parseRecoveryDetail } from '@lockfabric/coordinator/service';
import { headers } from '@nats-io/transport-node';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RecoveryStage, encodePacketBatch, stampBatchEpoch } from '@lockfabric/wire';
import { LocalChaos, liveOptions, runLive, tail } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, liveNowNs, metric, runProgress, sleep, switchOpened, waitFor } from './live-chaos-support.js';
import { actionWords, fissPhases, holdsAcross, stepsOf } from './fiss-recovery-support.js';

// FissLock recovery S1–S3 driven by the coordinator across real processes: switch-dataplane
// (program fisslock), a memory node, two compute nodes and the coordinator over real NATS and gRPC.
// The switch is SIGKILLed while clients hold locks whose critical sections outlast the outage, and
// restarted with empty registers (S0). The coordinator sees the new incarnation, pauses both compute
// nodes and gathers their agents and clients (S1), sends each its repaired agents (S2), rewrites the
// switch's registers for the held locks through SwitchControl (S3), and lets the nodes resume.
const TIMEOUT_MS = 10_000;
/** Heartbeats every 100 ms; a member is dead after this many misses (a loaded 2-core machine stalls event loops for 100s of ms). */
const MISSES = 10;
const DETECTION_MS = 100 * MISSES;
/** Long enough that every lock granted before the kill is still held when S1 runs. */
const HOLD_MS = 6_000;
/** Critical sections of the compute-node kill: short, so the survivor queues for the dead node's locks. */
const CS_MS = 150;

describe('live chaos: FissLock S1–S3 driven by the coordinator', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  let coordinator: ProcessRecord;
  let switchRecord: ProcessRecord;

  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock', computeNodes: 2, clientsPerComputeNode: 16, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });
    coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    switchRecord = cluster.state.processes.find((p) => p.role === 'switch')!;
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-fiss-recovery', logger: silentLogger });
    // No announcement from the test: switch-dataplane tells the coordinator where its control API is.
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('kill and restart switch-dataplane mid-run: S1–S3 run, held locks are restored, the run completes, the checker passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    await switchOpened(cluster.state);
    const progress = runProgress();
    const run = runLive({
      state: cluster.state,
      protocol: 'fisslock',
      protocolOptions: liveOptions('fisslock'),
      spec: { clients: 8, locks: 64, readRatio: 0.25, distribution: 'uniform', durationMs: 12_000, thinkNs: 0, criticalSectionNs: HOLD_MS * MS, seed: 17, timeoutMs: TIMEOUT_MS },
      beforeNodeStart: progress.beforeNodeStart,
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    // Both nodes hold locks (6 s holds) before the kill, not a fixed sleep that can end in the setup.
    await progress.untilRunning([1, 2], 1, run);
    const killedAtNs = liveNowNs();
    await chaos.kill(switchRecord.name);
    await sleep(DETECTION_MS + 300); // declared dead before it comes back
    await chaos.restart(switchRecord.name);
    const restartedAtNs = liveNowNs();
    const member = `switch/${switchRecord.node}`;
    // The switch started closed, so the coordinator's first sight of it ran S1–S3 at cluster start
    // (recorded only when this run's first agents already existed; with none there is nothing to
    // repair). The restart gets exactly one recovery.
    const sinceKill = (phases: Awaited<ReturnType<typeof fissPhases>>) => stepsOf(phases, member).filter((s) => Number(parseRecoveryDetail(s.detail)['start_ns']) >= killedAtNs);
    await waitFor(async () => sinceKill(await fissPhases(coordinator)).length >= 3, 15_000, 'S1–S3 of the switch recovery in Status');
    const result = await run;

    const phases = await fissPhases(coordinator);
    const atStart = stepsOf(phases, member).filter((s) => Number(parseRecoveryDetail(s.detail)['start_ns']) < killedAtNs);
    expect([0, 3], `first sight of the closed switch at cluster start: ${atStart.map((s) => s.stage).join(',')}`).toContain(atStart.length);
    const steps = sinceKill(phases);
    expect(steps.map((s) => s.stage), 'one recovery for the restart').toStrictEqual([RecoveryStage.S1, RecoveryStage.S2, RecoveryStage.S3]);
    const [s1, s2, s3] = steps.map(actionWords);
    const took = steps.map((s) => Number(parseRecoveryDetail(s.detail)['took_ns']) / MS);
    console.log(`fisslock switch recovery: S1 ${took[0]?.toFixed(1)} ms (${steps[0]?.detail.split('action=')[1]}), S2 ${took[1]?.toFixed(1)} ms (${steps[1]?.detail.split('action=')[1]}), S3 ${took[2]?.toFixed(1)} ms (${steps[2]?.detail.split('action=')[1]})`);
    // both compute nodes took part; the locks held across the outage came back as agents and switch registers
    expect(s1?.['survivors']).toBe(2);
    expect(s2?.['held']).toBeGreaterThanOrEqual(1);
    expect(s3?.['registers']).toBeGreaterThanOrEqual(3 * (s2?.['held'] ?? 0));

    // the run completed on both nodes and its history passes the checker
    expect(result.failedNodes).toStrictEqual([]);
    expect(result.verdict?.violations).toStrictEqual([]);
    expect(result.verdict?.ok, result.verdict ? summarizeVerdict(result.verdict) : 'no verdict').toBe(true);
    expect(checkHistory(result.history, { maxWaitNs: (TIMEOUT_MS + 500) * MS }).ok).toBe(true);
    // holds granted before the kill ended with a successful release after the restart: restored, not lost
    expect(holdsAcross(result.history, killedAtNs, restartedAtNs)).toBeGreaterThanOrEqual(1);
    // and locks were granted again after the recovery
    const laterGrants = result.history.filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > restartedAtNs);
    expect(laterGrants.length).toBeGreaterThan(0);

    // admission: the restarted switch started closed and the coordinator opened it after S3 at the
    // recovery's epoch; a batch stamped with an older epoch is dropped before the program sees it
    const restarted = chaos.process(switchRecord.name);
    expect(await metric(restarted, 'lockfabric_switch_admission_open')).toBe(1);
    expect(await metric(restarted, 'lockfabric_switch_admission_epoch')).toBeGreaterThan(1);
    const closedDrops = await metric(restarted, 'lockfabric_switch_admission_drops_total', 'reason="closed"');
    const staleBefore = await metric(restarted, 'lockfabric_switch_admission_drops_total', 'reason="stale-epoch"');
    const stale = headers();
    stale.set('lockfabric-epoch', '1');
    const probe = { type: 'ack' as const, lock: 0, machine: 999, task: 0, mode: 'exclusive' as const, incarnation: 0, seq: 0, flags: 0, dst: 999 };
    nc.publish(createSubjects(cluster.state.cluster).switchIn(0), encodePacketBatch([probe], 999), { headers: stale });
    await nc.flush();
    await waitFor(async () => (await metric(restarted, 'lockfabric_switch_admission_drops_total', 'reason="stale-epoch"')) >= staleBefore + 1, 5_000, 'the stale-epoch batch counted');
    // the same stamp in the batch itself, as compute nodes send it (no header)
    nc.publish(createSubjects(cluster.state.cluster).switchIn(0), stampBatchEpoch(encodePacketBatch([probe], 999), 1n));
    await nc.flush();
    await waitFor(async () => (await metric(restarted, 'lockfabric_switch_admission_drops_total', 'reason="stale-epoch"')) >= staleBefore + 2, 5_000, 'the stale-epoch batch stamped in its payload counted');
    console.log(`restarted switch: ${closedDrops} stamped batches dropped while closed (before S3)`);
  });

  it('SIGKILL a compute node holding locks: S1–S3 over the survivor, its locks are granted to survivors, the checker passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const victim = chaos.process('compute-2');
    await switchOpened(cluster.state);
    const run = runLive({
      state: cluster.state,
      protocol: 'fisslock',
      protocolOptions: liveOptions('fisslock'),
      spec: { clients: 8, locks: 4, readRatio: 0.2, distribution: 'uniform', durationMs: 10_000, thinkNs: 1 * MS, criticalSectionNs: CS_MS * MS, seed: 23, timeoutMs: TIMEOUT_MS },
      tolerateNodeFailures: true,
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    await sleep(1_200);
    const killedAtNs = liveNowNs();
    await chaos.kill('compute-2');
    const member = `compute/${victim.node}`;
    await waitFor(async () => stepsOf(await fissPhases(coordinator), member).length === 3, 15_000, 'S1–S3 of the compute-node recovery in Status').catch((error: unknown) => {
      const survivor = chaos.process('compute-1');
      throw new Error(`${String(error)}\ncoordinator log:\n${tail(coordinator.log, 30)}\ncompute-1 log:\n${tail(survivor.log, 15)}`);
    });
    const result = await run;

    const steps = stepsOf(await fissPhases(coordinator), member);
    expect(steps.map((s) => s.stage)).toStrictEqual([RecoveryStage.S1, RecoveryStage.S2, RecoveryStage.S3]);
    const took = steps.map((s) => Number(parseRecoveryDetail(s.detail)['took_ns']) / MS);
    console.log(`fisslock compute-node recovery: ${steps.map((s, i) => `${['S1', 'S2', 'S3'][i]} ${took[i]?.toFixed(1)} ms (${s.detail.split('action=')[1]})`).join(', ')}`);
    expect(actionWords(steps[0]!)['survivors']).toBe(1);

    expect(result.failedNodes.map((f) => f.node)).toStrictEqual([victim.node]);
    // S2 keeps every surviving request (spec §7.2 step 3: queued at the dead node's agent or not), so
    // no survivor acquire ends with LockAbortedError; the dead node's own requests die with it (their
    // abort is shown live in live-fisslock-recovery-fence.test.ts, where the node lives on)
    expect(result.summary.failuresByCode['LOCK_ABORTED'] ?? 0).toBe(0);
    expect(result.verdict?.ok, result.verdict ? summarizeVerdict(result.verdict) : 'no verdict').toBe(true);
    // The dead node's clients failed at its last delivered event, not at the kill: the node streams
    // its history every 50 ms, so a release it recorded just before the SIGKILL can be lost, and
    // counting the hold as open until the kill would flag the next grant (CI, seed 23: a shared
    // hold released ~6 ms before the kill overlapped the survivor's exclusive grant).
    const lastEventNs = result.nodeFailures.find((f) => f.node === victim.node)?.lastEventNs;
    expect(lastEventNs, 'the victim streamed some history before it died').toBeDefined();
    const diedAtNs = Math.min(killedAtNs, lastEventNs ?? killedAtNs);
    const failedClients = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`${victim.node}/${i}`, diedAtNs]));
    const verdict = checkHistory(result.history, { failedClients, maxWaitNs: (TIMEOUT_MS + 500) * MS });
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    // every lock, including those the dead node held or hosted the agent of, is granted to the
    // survivor after the recovery; the run goes on long enough after S3 for an attempt cut by the
    // recovery to time out (T_ACQ, 2 s live) and be retried (the times are reported, not asserted: a timing never decides a test)
    const s3EndNs = Number(parseRecoveryDetail(steps[2]!.detail)['end_ns']);
    const firstGrantMs: number[] = [];
    const neverGranted: number[] = [];
    for (let lock = 0; lock < 4; lock++) {
      const grant = result.history.find((e) => e.lock === lock && e.op === 'acquire' && e.phase === 'ok' && e.timeNs > s3EndNs);
      if (grant) firstGrantMs.push((grant.timeNs - killedAtNs) / MS);
      else neverGranted.push(lock);
    }
    // every lock comes back (the lost-lock gap, FissLock recovery README: a survivor's request queued by S2 whose
    // attempt then timed out never sent its abort, and the agent later handed the lock to it)
    expect(neverGranted, `locks never granted to a survivor after S3\ncoordinator log:\n${tail(coordinator.log, 20)}`).toStrictEqual([]);
    console.log(`first survivor grant per lock after S3: ${firstGrantMs.map((ms) => `+${ms.toFixed(0)} ms`).join(', ')} from the kill; S3 ended +${((s3EndNs - killedAtNs) / MS).toFixed(0)} ms`);
  });
});
