import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import { SwitchControlClient } from '@lockfabric/live';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

// A FissLock switch started with its own settings (what `cluster up --switch-program fisslock
// --switch-policy write-preferring --switch-lock-count 4096` does): the switch-dataplane process
// takes them, Describe reports them, and a run whose clients disagree with the decider is refused
// before any client starts, while one that agrees passes the checker.
describe('live: a fisslock switch started with a policy and a lock count', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>> | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });
  const spec = { clients: 8, locks: 3, readRatio: 0.5, distribution: 'uniform' as const, operations: 200, thinkNs: 0, criticalSectionNs: 20_000, seed: 5, timeoutMs: 10_000 };

  it('reports the settings, refuses a run with another policy, and runs one that matches', async () => {
    cluster = await withLiveCluster({ withCoordinator: false, switchProgram: 'fisslock', switchSettings: { policy: 'write-preferring', lockCount: 4_096 } });
    const record = cluster.state.processes.find((p) => p.role === 'switch');
    const control = new SwitchControlClient(`127.0.0.1:${String(record?.grpc)}`);
    try {
      const described = await control.describe();
      expect([described.program, described.policy, described.lockCount]).toEqual(['fisslock', 'write-preferring', 4_096n]);
    } finally {
      control.close();
    }

    const refused = runLive({ state: cluster.state, protocol: 'fisslock', spec, protocolOptions: liveOptions('fisslock') });
    await expect(refused).rejects.toBeInstanceOf(ConfigError);
    await expect(refused).rejects.toThrow("the switch's fisslock decider is write-preferring; the clients are read-preferring");

    const result = await runLive({ state: cluster.state, protocol: 'fisslock', spec, protocolOptions: { ...liveOptions('fisslock'), policy: 'write-preferring' } });
    expect(result.verdict?.violations).toEqual([]);
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires + result.summary.acquireFailures).toBe(200);
    expect(result.switch?.switchGrants).toBeGreaterThan(0);
  }, 120_000);
});
