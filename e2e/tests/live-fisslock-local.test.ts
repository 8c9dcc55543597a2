import { afterAll, describe, expect, it } from 'vitest';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import { summarizeVerdict } from '@lockfabric/check';
import { withLiveCluster } from './live-cluster.js';

// FissLock-Local (fisslock --opt placement=home) across real processes: switch-dataplane running
// the fisslock decider, a memory node and two compute nodes over real NATS.
describe('live: FissLock-Local (fisslock placement=home)', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>> | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('a contended mixed workload over both nodes passes the checker', async () => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: 'fisslock' });
    const result = await runLive({
      state: cluster.state,
      protocol: 'fisslock',
      spec: { clients: 8, locks: 3, readRatio: 0.4, distribution: 'uniform', operations: 120, thinkNs: 0, criticalSectionNs: 20_000, seed: 23, timeoutMs: 10_000 },
      protocolOptions: liveOptions('fisslock', { placement: 'home' }),
    });
    if (result.verdict && !result.verdict.ok) console.log(`logs in ${cluster.dir}\n${summarizeVerdict(result.verdict)}`);
    expect(result.verdict?.violations).toEqual([]);
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires + result.summary.acquireFailures).toBe(120);
    expect(new Set(result.history.map((e) => e.client.split('/')[0])).size).toBe(2);
  });

  // One client on the first compute node, the home of lock 0: the decider grants the lock once (①)
  // and every later acquire is granted by the parked agent without a packet; FissLock as published
  // frees the lock after each release, so every acquire is a ① grant.
  it.each([
    ['home', 1],
    ['migrate', 30],
  ] as const)('placement=%s: 30 uncontended exclusive acquires at the home take %i switch ① grant(s)', async (placement, grants) => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: 'fisslock' });
    const result = await runLive({
      state: cluster.state,
      protocol: 'fisslock',
      spec: { clients: 1, locks: 1, readRatio: 0, distribution: 'uniform', operations: 30, thinkNs: 0, criticalSectionNs: 1_000, seed: 5, timeoutMs: 10_000 },
      protocolOptions: liveOptions('fisslock', { placement }),
    });
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires).toBe(30);
    expect(result.switch?.decisions['grant-free']).toBe(grants);
  });
});
