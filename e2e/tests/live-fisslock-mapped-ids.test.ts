import { afterAll, describe, expect, it } from 'vitest';
import { summarizeVerdict } from '@lockfabric/check';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import type { LiveRunResult } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

// FissLock with sparse application lock ids across real processes (FissLock §6, "non-linear lock IDs"): the
// switch-dataplane runs the FissLock decider, two compute nodes run clients over real NATS, and the
// id-map daemon runs in the lowest-numbered compute node's FissLock service. The workload draws
// 4 lock indexes and spreads them over [0, 2^32) (`lockIds: 'sparse'`), so every id is far past
// the decider's capacity (the run's lock count, 4). With lockIds=mapped the clients map them to
// lids 0–3 and the switch decides grants; with the default lockIds=dense the very same ids are
// out of range, the ParLock fallback serves them all and the switch decides none — which is how
// the test tells that the run used mapped ids.
const spec: Parameters<typeof runLive>[0]['spec'] = {
  clients: 8,
  locks: 4,
  lockIds: 'sparse',
  readRatio: 0.4,
  distribution: 'uniform',
  operations: 400,
  thinkNs: 0,
  criticalSectionNs: 20_000,
  seed: 29,
  timeoutMs: 10_000,
};

function report(name: string, result: LiveRunResult, dir: string): void {
  if (result.verdict && !result.verdict.ok) console.log(`${name} (logs in ${dir}):\n${summarizeVerdict(result.verdict)}`);
}

describe('live: fisslock with lockIds=mapped on sparse lock ids', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>> | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  it('switch-dataplane + 2 compute nodes over NATS: the checker passes and the switch decides grants for the mapped ids', async () => {
    cluster = await withLiveCluster({ withCoordinator: false, switchProgram: 'fisslock' });
    const mapped = await runLive({ state: cluster.state, protocol: 'fisslock', spec, protocolOptions: liveOptions('fisslock', { lockIds: 'mapped' }) });
    report('mapped', mapped, cluster.dir);
    expect(mapped.verdict?.violations).toEqual([]);
    expect(mapped.verdict?.ok).toBe(true);
    expect(mapped.summary.acquires + mapped.summary.acquireFailures).toBe(spec.operations);
    expect(mapped.summary.acquires).toBeGreaterThanOrEqual(360);
    expect(mapped.summary.failuresByCode['LOCK_ID_MAP'] ?? 0).toBe(0);
    // the history names sparse application ids (at most 4 of them, none below the lock count), from both nodes
    const ids = new Set(mapped.history.map((e) => e.lock));
    expect(ids.size).toBeGreaterThan(1);
    expect(ids.size).toBeLessThanOrEqual(spec.locks);
    expect([...ids].every((id) => id >= spec.locks)).toBe(true);
    expect(new Set(mapped.history.map((e) => e.client.split('/')[0])).size).toBe(2);
    expect(mapped.switch?.program).toBe('fisslock');
    expect(mapped.switch?.switchGrants).toBeGreaterThan(0);

    // the same sparse ids unmapped: all past the capacity, so the switch only routes them
    const dense = await runLive({ state: cluster.state, protocol: 'fisslock', spec: { ...spec, operations: 100 }, protocolOptions: liveOptions('fisslock') });
    report('dense', dense, cluster.dir);
    expect(dense.verdict?.violations).toEqual([]);
    expect(dense.history.every((e) => e.lock >= spec.locks)).toBe(true);
    expect(dense.summary.acquires).toBeGreaterThan(0);
    expect(dense.switch?.switchGrants).toBe(0);
    expect(dense.switch?.decisions['fallback-routed'] ?? 0).toBeGreaterThan(0);
  });
});
