import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

describe('live: caslock across separate processes', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('runs a real nats-server, a memory node and two compute nodes as separate processes', () => {
    const roles = cluster.state.processes.map((p) => p.role);
    expect(roles.filter((r) => r === 'compute')).toHaveLength(2);
    expect(roles).toContain('memory');
    expect(roles).toContain('nats');
    const pids = new Set(cluster.state.processes.map((p) => p.pid));
    expect(pids.size).toBe(cluster.state.processes.length);
    expect(pids.has(process.pid)).toBe(false);
    for (const p of cluster.state.processes) expect(isAlive(p.pid), p.name).toBe(true);
  });

  it('32 clients on a small hot set: the merged history passes the checker', async () => {
    const result = await runLive({
      state: cluster.state,
      protocol: 'caslock',
      protocolOptions: { variant: 'rw' },
      spec: { clients: 32, locks: 4, readRatio: 0.3, distribution: 'uniform', operations: 1_500, thinkNs: 0, criticalSectionNs: 20_000, seed: 3, timeoutMs: 20_000 },
    });
    expect(result.verdict?.violations).toEqual([]);
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires).toBe(1_500);
    // Both compute nodes contributed clients to one history.
    const nodes = new Set(result.history.map((e) => e.client.split('/')[0]));
    expect(nodes.size).toBe(2);
    expect(result.verbs['cas'] ?? 0).toBeGreaterThan(0);
  });

  it('the mutant that skips the compare is caught on live too', async () => {
    const result = await runLive({
      state: cluster.state,
      protocol: 'caslock',
      protocolOptions: { mutantSkipCompare: true },
      spec: { clients: 32, locks: 2, readRatio: 0, distribution: 'uniform', operations: 1_000, thinkNs: 0, criticalSectionNs: 50_000, seed: 4, timeoutMs: 20_000 },
    });
    expect(result.verdict?.violations.length ?? 0).toBeGreaterThan(0);
  });
});
