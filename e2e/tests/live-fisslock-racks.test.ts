import { summarizeVerdict } from '@lockfabric/check';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withLiveCluster } from './live-cluster.js';
import { metric, waitFor } from './live-chaos-support.js';

// Multi-rack FissLock (§5.4) across real processes: `cluster up --racks 2` starts one
// switch-dataplane per rack (program fisslock), two compute nodes (one per rack), a memory node
// and the coordinator, over real NATS and gRPC. Each compute node sends a lock's packets to the
// switch owning the lock id (lock mod 2), its own rack's or the other's.
describe('live: FissLock over two racks', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  let switches: ProcessRecord[];

  beforeAll(async () => {
    cluster = await withLiveCluster({ switchProgram: 'fisslock', computeNodes: 2, racks: 2, clientsPerComputeNode: 16 });
    switches = cluster.state.processes.filter((p) => p.role === 'switch');
    // the coordinator opens every switch at its first sight of it
    for (const sw of switches) await waitFor(async () => (await metric(sw, 'lockfabric_switch_admission_open').catch(() => 0)) === 1, 30_000, `the coordinator to open ${sw.name}`);
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('one switch-dataplane per rack; a contended run over locks of both switches passes the checker and both switches decide grants', async () => {
    expect(switches).toHaveLength(2);
    expect(cluster.state.racks).toBe(2);
    const before = await Promise.all(switches.map((sw) => metric(sw, 'lockfabric_switch_packets_total')));
    const result = await runLive({
      state: cluster.state,
      protocol: 'fisslock',
      protocolOptions: liveOptions('fisslock'),
      spec: { clients: 8, locks: 6, readRatio: 0.3, distribution: 'uniform', operations: 300, thinkNs: 0, criticalSectionNs: 20_000, seed: 31, timeoutMs: 10_000 },
    });
    if (result.verdict && !result.verdict.ok) console.log(`fisslock over two racks (logs in ${cluster.dir}):\n${summarizeVerdict(result.verdict)}`);
    expect(result.verdict?.violations).toEqual([]);
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires).toBeGreaterThan(0);
    const after = await Promise.all(switches.map((sw) => metric(sw, 'lockfabric_switch_packets_total')));
    const packets = after.map((n, i) => n - (before[i] ?? 0));
    console.log(`fisslock over two racks: packets per switch ${packets.join(', ')}; switch grants per rack ${result.switch?.switchGrantsByRack?.join(', ')}`);
    // both racks' switches took part: packets in, grants decided
    for (const n of packets) expect(n).toBeGreaterThan(0);
    expect(result.switch?.switchGrantsByRack).toHaveLength(2);
    for (const n of result.switch?.switchGrantsByRack ?? []) expect(n).toBeGreaterThan(0);
  }, 60_000);
});
