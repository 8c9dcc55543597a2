import { create, toBinary } from '@bufbuild/protobuf';
import { summarizeVerdict } from '@lockfabric/check';
import { connectNats, createSubjects, silentLogger } from '@lockfabric/live';
import { FissStuckLockSchema } from '@lockfabric/wire';
import { LocalChaos, liveOptions, runLive, tail } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, metric, sleep, waitFor } from './live-chaos-support.js';

// Spec §12.9, live: a compute node's watchdog reports a stuck lock on ctl.report.fiss.stuck
// (libs/locks/fisslock/control/src/stuck-reporter.ts publishes exactly this message) while a FissLock run is in progress. The
// coordinator process repairs with S1–S3 over the compute-node processes — clients paused, agents
// rebuilt, the switch rewritten and reopened at a new epoch — and the run goes on: every acquire
// ends granted or with a typed error, and the merged history passes the checker. A second report
// right after the repair is coalesced. A stalled-queue suspicion afterwards is confirmed with the
// compute nodes' lock reports first, and dismissed.
describe('live: a stuck-lock report repaired by the coordinator mid-run (FissLock)', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;

  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock', computeNodes: 2, clientsPerComputeNode: 16 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('S1–S3 run on the report, the run passes the checker, a report right after is coalesced', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const coordinator = cluster.state.processes.find((p) => p.role === 'coordinator')!;
    const switchRecord = chaos.process('switch');
    await waitFor(async () => (await metric(switchRecord, 'lockfabric_switch_admission_open')) === 1, 30_000, 'the switch opened by the coordinator');
    const run = runLive({
      state: cluster.state,
      protocol: 'fisslock',
      protocolOptions: liveOptions('fisslock'),
      spec: { clients: 8, locks: 6, readRatio: 0.4, distribution: 'uniform', durationMs: 6_000, thinkNs: 0, criticalSectionNs: 2 * MS, seed: 41, timeoutMs: 10_000 },
    });
    run.catch(() => undefined);
    await sleep(2_000);
    const nc = await connectNats({ servers: cluster.state.natsUrl, name: 'stuck-report-test', logger: silentLogger });
    const subjects = createSubjects(cluster.state.cluster);
    try {
      nc.publish(subjects.protocolReport('fiss', 'stuck'), toBinary(FissStuckLockSchema, create(FissStuckLockSchema, { machine: 1, lock: 3, reason: 'agent-without-holders' })));
      await nc.flush();
      await waitFor(async () => (await metric(coordinator, 'lockfabric_coordinator_fiss_stuck_total', 'outcome="repair"')) === 1, 20_000, 'the repair counted');
      await waitFor(() => /fisslock recovery after lock\/3, epoch \d+, machines \[[\d, ]+\], failed \[\]: S1/.test(tail(coordinator.log, 80)), 20_000, 'S1–S3 after lock/3 in the coordinator log').catch((error: unknown) => {
        throw new Error(`${String(error)}\ncoordinator log:\n${tail(coordinator.log, 30)}`);
      });
      nc.publish(subjects.protocolReport('fiss', 'stuck'), toBinary(FissStuckLockSchema, create(FissStuckLockSchema, { machine: 2, lock: 4, reason: 'bouncing' })));
      await nc.flush();
      await waitFor(async () => (await metric(coordinator, 'lockfabric_coordinator_fiss_stuck_total', 'outcome="coalesced"')) === 1, 20_000, 'the second report coalesced');
    } finally {
      await nc.close();
    }
    const result = await run;
    if (result.verdict && !result.verdict.ok) console.log(summarizeVerdict(result.verdict));
    expect(result.verdict?.violations).toEqual([]);
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires).toBeGreaterThan(0);
    expect(await metric(coordinator, 'lockfabric_coordinator_fiss_stuck_total', 'outcome="repair"')).toBe(1);
    // a stalled-queue report is a suspicion: the coordinator asks every compute node for its records
    // of the lock (lock-report), finds nobody holding it stuck, and repairs nothing
    const after = await connectNats({ servers: cluster.state.natsUrl, name: 'stuck-suspicion-test', logger: silentLogger });
    try {
      after.publish(subjects.protocolReport('fiss', 'stuck'), toBinary(FissStuckLockSchema, create(FissStuckLockSchema, { machine: 1, lock: 5, reason: 'stalled-queue' })));
      await after.flush();
      await waitFor(async () => (await metric(coordinator, 'lockfabric_coordinator_fiss_stuck_total', 'outcome="dismissed"')) === 1, 20_000, 'the suspicion dismissed').catch((error: unknown) => {
        throw new Error(`${String(error)}\ncoordinator log:\n${tail(coordinator.log, 30)}`);
      });
    } finally {
      await after.close();
    }
    expect(await metric(coordinator, 'lockfabric_coordinator_fiss_stuck_total', 'outcome="repair"')).toBe(1);
  }, 120_000);
});
