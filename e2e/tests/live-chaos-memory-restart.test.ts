import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { announceLockTable } from '@lockfabric/coordinator/service';
import { fromBinary } from '@bufbuild/protobuf';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { RecoveryPhaseSchema } from '@lockfabric/wire';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, liveNowNs, metric, sleep, waitFor } from './live-chaos-support.js';

// SIGKILL the memory node mid-run, then restart it (empty memory): acquires in flight fail with a
// typed error and nothing hangs; after the restart the coordinator announces the lock table's
// protocol again, the next run (which zeroes the table first) succeeds and passes the checker.
const TIMEOUT_MS = 1_000;
const spec = { clients: 6, locks: 3, readRatio: 0, distribution: 'uniform', thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 23, timeoutMs: TIMEOUT_MS } as const;

describe('live chaos: the memory node dies and restarts with empty memory', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let nc: Awaited<ReturnType<typeof connectNats>>;
  /** Compute nodes a memory node reported fenced (declared dead by the coordinator). */
  const fenced = new Set<number>();

  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: '6' } });
    nc = await connectNats({ servers: cluster.state.natsUrl, name: 'e2e-chaos-memory', logger: silentLogger });
    nc.subscribe(createSubjects(cluster.state.cluster).recovery('phase'), {
      callback: (error, msg) => {
        if (!error) fenced.add(fromBinary(RecoveryPhaseSchema, msg.data).node);
      },
    });
  });
  afterAll(async () => {
    await nc?.close();
    await cluster?.stop();
  });

  it('caslock: in-flight acquires fail typed, nothing hangs; after restart and re-init the next run passes', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const coordinator = chaos.state().processes.find((p) => p.role === 'coordinator')!;
    await announceLockTable(nc, createSubjects(cluster.state.cluster), 'caslock', spec.locks);
    const run = runLive({ state: cluster.state, protocol: 'caslock', spec: { ...spec, durationMs: 2_000 }, tolerateNodeFailures: true });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    // Kill once every compute node's clients are working (a fixed sleep lost the race under load).
    for (const node of [1, 2]) {
      const compute = chaos.process(`compute-${node}`);
      await waitFor(async () => (await metric(compute, 'lockfabric_lock_operations_total', 'protocol="caslock"')) >= 5, 30_000, `compute-${node}'s first operations`);
    }
    const killedAtNs = liveNowNs();
    await chaos.kill('memory-0');
    const during = await run;

    // The compute nodes themselves survived; their clients saw the dead memory node as typed failures.
    expect(during.failedNodes).toStrictEqual([]);
    const failures = during.history.filter((e) => e.op === 'acquire' && e.phase === 'fail' && e.timeNs >= killedAtNs);
    expect(failures.length).toBeGreaterThan(0);
    expect(new Set(failures.map((e) => e.error))).toStrictEqual(new Set(['FabricAccessError']));
    // Nothing hung: every acquire invoked ended, none waited past its timeout (plus slack).
    const verdict = checkHistory(during.history, { maxWaitNs: (TIMEOUT_MS + 300) * MS });
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    expect(during.summary.acquires).toBeGreaterThan(0);

    const announcedBefore = await metric(coordinator, 'lockfabric_coordinator_recoveries_total', 'event="table"');
    await chaos.restart('memory-0');
    // The coordinator saw the new incarnation and finished the memory node's recovery; it announces
    // the table binding again (the restarted node forgot it), which it hears back itself.
    await waitFor(async () => (await metric(coordinator, 'lockfabric_coordinator_recoveries_total', 'event="table"')) > announcedBefore, 10_000, 'table binding announced again');
    // On this loaded 2-core machine a compute node whose clients fail fast during the outage can miss
    // its heartbeats and be declared dead; it is then fenced for good and must restart (a new
    // incarnation) like any node declared dead. The views are re-announced every second.
    await sleep(1_500);
    for (const node of fenced) await chaos.restart(`compute-${node}`);
    const memory = chaos.process('memory-0');
    await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 0, 15_000, 'no compute node fenced');

    const after = await runLive({ state: chaos.state(), protocol: 'caslock', spec: { ...spec, operations: 300 } });
    expect(after.verdict?.ok, after.verdict ? summarizeVerdict(after.verdict) : 'no verdict').toBe(true);
    expect(after.summary.acquires, JSON.stringify(after.summary)).toBe(300);
  });
});
