import { afterAll, describe, expect, it } from 'vitest';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import type { LiveRunResult } from '@lockfabric/workload-driver';
import { summarizeVerdict } from '@lockfabric/check';
import { withLiveCluster } from './live-cluster.js';

// The switch family across real processes: switch-dataplane (running the protocol's program),
// a memory node and two compute nodes over real NATS; the merged history must pass the checker.
// Before each run the driver resets the switch and, for NetLock, installs the hot-lock queues of
// a profiled pre-run trace; after it, it reads how many grants the switch decided.
const serverOptions = { retransmitNs: '20000000', maxAttempts: '400' };
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

  if (program !== 'fisslock') return;

  // FissLock-Local (`--opt placement=home`, decision 0012) on the same cluster.
  it('fisslock placement=home: contended mixed workload passes the checker', async () => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: program });
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
  ] as const)('fisslock placement=%s: 30 uncontended exclusive acquires at the home take %i switch ① grant(s)', async (placement, grants) => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: program });
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
