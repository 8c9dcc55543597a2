import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableProtocols } from '@lockfabric/lock-catalog';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { clipExpiredLeases, liveOptions, runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

// Every RDMA protocol of the catalog across real processes: a memory node, two compute nodes,
// real NATS and real gRPC; the merged history must pass the checker.
const protocols = availableProtocols().filter((p) => p.fabric === 'verbs');

// Options sized for this emulated fabric, where a verb over gRPC takes ~100 µs instead of RDMA's
// ~2 µs: the defaults the CLI applies on live (leases, poll units, successor-link timeouts).
describe('live: every RDMA protocol across separate processes', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it.each(protocols.filter((p) => p.id === 'rma-rw').flatMap((p) => [p, p, p, p, p, p]).map((p) => [p.id, p] as const))('%s: contended mixed workload passes the checker', async (_id, protocol) => {
    const readRatio = protocol.modes.includes('shared') ? 0.4 : 0;
    const result = await runLive({
      state: cluster.state,
      protocol: protocol.id,
      protocolOptions: liveOptions(protocol.id),
      spec: { clients: 12, locks: 3, readRatio, distribution: 'uniform', operations: 600, thinkNs: 0, criticalSectionNs: 20_000, seed: 11, timeoutMs: 30_000 },
    });
    // Lease safety: a holder that outlived its lease must see LeaseExpiredError at release, and only
    // the protected part of such a hold counts; every other overlap is a violation.
    const verdict = checkHistory(clipExpiredLeases(result.history, 0));
    expect(verdict.violations, `${protocol.id}\n${summarizeVerdict(verdict)}`).toEqual([]);
    expect(verdict.ok, `${protocol.id}\n${summarizeVerdict(verdict)}`).toBe(true);
    // Every acquire completed or failed with a typed error; on a loaded machine a few may time out.
    expect(result.summary.acquires + result.summary.acquireFailures).toBe(600);
    expect(result.summary.acquires).toBeGreaterThanOrEqual(540);
    expect(new Set(result.history.map((e) => e.client.split('/')[0])).size).toBe(2);
  });
});
