import { afterAll, describe, expect, it } from 'vitest';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import type { LiveRunResult } from '@lockfabric/workload-driver';
import { summarizeVerdict } from '@lockfabric/check';
import { withLiveCluster } from './live-cluster.js';

// The switch family across real processes: switch-dataplane (running the protocol's program),
// a memory node and two compute nodes over real NATS; the merged history must pass the checker.
// Before each run the driver resets the switch and, for NetLock, installs the hot-lock queues of
// a profiled pre-run trace; after it, it reads how many grants the switch decided.
const serverOptions = { retransmitMs: '20', maxAttempts: '400' };
const groups: { program: string; protocols: string[] }[] = [
  { program: 'forward', protocols: ['srvlock', 'parlock'] },
  { program: 'netlock', protocols: ['netlock'] },
  { program: 'fisslock', protocols: ['fisslock'] },
];

describe.each(groups)('live: switch-dataplane running $program', ({ program, protocols }) => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>> | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it.each(protocols)('%s: contended mixed workload passes the checker', async (protocol) => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: program });
    const result: LiveRunResult = await runLive({
      state: cluster.state,
      protocol,
      spec: { clients: 8, locks: 3, readRatio: 0.4, distribution: 'uniform', operations: 400, thinkNs: 0, criticalSectionNs: 20_000, seed: 21, timeoutMs: 10_000 },
      // FissLock's timers sized for NATS round trips (its defaults are for a µs switch).
      protocolOptions: protocol === 'fisslock' ? liveOptions('fisslock') : serverOptions,
    });
    // On a failure, say which protocol and how (the violations' diff alone is long and gets cut).
    if (result.verdict && !result.verdict.ok) {
      const byLock = new Map<number, number>();
      for (const v of result.verdict.violations) byLock.set(v.lock, (byLock.get(v.lock) ?? 0) + 1);
      console.log(`${protocol} (cluster ${cluster.state.cluster}, logs in ${cluster.dir}): violations by lock ${JSON.stringify(Object.fromEntries(byLock))}\n${summarizeVerdict(result.verdict)}`);
    }
    expect(result.verdict?.violations, protocol).toEqual([]);
    expect(result.verdict?.ok, protocol).toBe(true);
    // Every acquire completed or failed with a typed error; on a loaded machine a few may time out.
    expect(result.summary.acquires + result.summary.acquireFailures).toBe(400);
    expect(result.summary.acquires).toBeGreaterThanOrEqual(360);
    expect(new Set(result.history.map((e) => e.client.split('/')[0])).size).toBe(2);
    expect(result.switch?.program).toBe(program);
    if (protocol === 'netlock') {
      // The knapsack allocation put the three locks in switch queues: the switch decides grants.
      expect(result.switch?.hotLocks).toBe(3);
      expect(result.switch?.switchGrantShare).toBeGreaterThan(0);
    }
    if (protocol === 'fisslock') expect(result.switch?.switchGrants).toBeGreaterThan(0);
    if (program === 'forward') expect(result.switch?.switchGrants).toBe(0);
  });
});
