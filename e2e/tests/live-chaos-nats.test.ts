import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { LocalChaos, isAlive, runLive, tail } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { MS, dslrLiveOptions, metric, sleep } from './live-chaos-support.js';

// Restart nats-server mid-run. DSLR's data path is gRPC (verbs), so the run itself loses nothing;
// NATS carries heartbeats and views, which are lost for the outage and resume on reconnect. The
// coordinator holds failure detection while it is itself disconnected, so nobody is declared dead.
describe('live chaos: nats-server restart mid-run', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, computeNodes: 2 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('services reconnect, nobody is declared dead, the run completes and passes the checker', async () => {
    const chaos = new LocalChaos(cluster.dir);
    const coordinator = chaos.state().processes.find((p) => p.role === 'coordinator')!;
    const oldNats = chaos.process('nats');
    const run = runLive({
      state: cluster.state,
      protocol: 'dslr',
      protocolOptions: dslrLiveOptions,
      spec: { clients: 8, locks: 4, readRatio: 0.3, distribution: 'uniform', durationMs: 4_000, thinkNs: 1 * MS, criticalSectionNs: 2 * MS, seed: 9, timeoutMs: 3_000 },
    });
    // Awaited below; failing while the test still waits on something else must not be an unhandled rejection.
    run.catch(() => undefined);
    await sleep(1_200);
    const restarted = await chaos.natsRestart();
    expect(restarted.newPid).not.toBe(oldNats.pid);
    expect(chaos.process('nats').pid).toBe(restarted.newPid);
    // Every service reconnected: heartbeats reach the coordinator again, and none was declared
    // dead over the outage. (Checked before the run ends: a compute node encoding a large history
    // stalls its event loop, which is a separate matter from NATS.)
    await sleep(1_500);
    const beats = await metric(coordinator, 'lockfabric_coordinator_heartbeats_total');
    await sleep(500);
    expect(await metric(coordinator, 'lockfabric_coordinator_heartbeats_total')).toBeGreaterThan(beats + 5);
    const deaths = await metric(coordinator, 'lockfabric_coordinator_member_transitions_total', 'to="dead"');
    expect(deaths, tail(coordinator.log, 25)).toBe(0);
    expect(await metric(coordinator, 'lockfabric_coordinator_members', 'state="alive"')).toBe(cluster.state.processes.length - 1);

    const result = await run;
    expect(result.verdict?.ok, result.verdict && summarizeVerdict(result.verdict)).toBe(true);
    expect(checkHistory(result.history, { maxWaitNs: 3_250 * MS }).ok).toBe(true);
    expect(result.summary.acquires).toBeGreaterThan(0);
    for (const p of chaos.state().processes) expect(isAlive(p.pid), p.name).toBe(true);
  });
});
