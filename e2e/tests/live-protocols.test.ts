import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableProtocols } from '@lockfabric/lock-catalog';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { clipExpiredLeases, runLive } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

// Every RDMA protocol of the catalog across real processes: a memory node, two compute nodes,
// real NATS and real gRPC; the merged history must pass the checker.
const protocols = availableProtocols().filter((p) => p.fabric === 'verbs');

// Leases sized for RDMA hardware (DrTM: 1 ms) are shorter than a contended hold on this emulated
// fabric, where a verb over gRPC takes ~100 µs; a holder then outlives its lease and the release
// reports LeaseExpiredError. Live runs size leases to the fabric, as a deployment would.
const liveOptions: Record<string, Record<string, string>> = {
  drtm: { leaseMs: '50', driftNs: '1000000', txMarginNs: '20000000' },
  // DSLR: the same for its lease, and the wait unit ω (≈ one round trip) that paces polling.
  dslr: { leaseMs: '200', waitUnitNs: '100000' },
  'dslr-backoff': { leaseMs: '200', waitUnitNs: '100000' },
  // RMA-RW's writer queue is MCS: its successor-link timeout sized as the mcs README says for live runs.
  'rma-rw': { releaseLinkTimeoutNs: '200000000', pollIntervalNs: '50000' },
};

describe('live: every RDMA protocol across separate processes', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it.each(protocols.map((p) => [p.id, p] as const))('%s: contended mixed workload passes the checker', async (_id, protocol) => {
    const readRatio = protocol.modes.includes('shared') ? 0.4 : 0;
    const result = await runLive({
      state: cluster.state,
      protocol: protocol.id,
      protocolOptions: liveOptions[protocol.id] ?? {},
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
