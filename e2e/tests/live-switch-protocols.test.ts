import { afterAll, describe, expect, it } from 'vitest';
import { runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

// The switch family across real processes: switch-dataplane (running the protocol's program),
// a memory node and two compute nodes over real NATS; the merged history must pass the checker.
// ParLock and FissLock pass on sim but not yet live (issue 4 stays open for them): ParLock loses a
// few acquires to timeouts across processes and the FissLock run stalls; see the issue notes.
const groups: { program: string; protocols: string[] }[] = [
  { program: 'forward', protocols: ['srvlock'] },
  { program: 'netlock', protocols: ['netlock'] },
];

describe.each(groups)('live: switch-dataplane running $program', ({ program, protocols }) => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>> | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it.each(protocols)('%s: contended mixed workload passes the checker', async (protocol) => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: program });
    const result = await runLive({
      state: cluster.state,
      protocol,
      spec: { clients: 8, locks: 3, readRatio: 0.4, distribution: 'uniform', operations: 400, thinkNs: 0, criticalSectionNs: 20_000, seed: 21, timeoutMs: 10_000 },
      protocolOptions: { retransmitMs: '20', maxAttempts: '400' },
    });
    expect(result.verdict?.violations, protocol).toEqual([]);
    expect(result.verdict?.ok, protocol).toBe(true);
    // Every acquire completed or failed with a typed error; on a loaded machine a few may time out.
    expect(result.summary.acquires + result.summary.acquireFailures).toBe(400);
    expect(result.summary.acquires).toBeGreaterThanOrEqual(360);
    expect(new Set(result.history.map((e) => e.client.split('/')[0])).size).toBe(2);
  });
});
