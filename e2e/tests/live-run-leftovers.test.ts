import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { liveOptions, runLive } from '@lockfabric/workload-driver';
import type { ClusterState } from '@lockfabric/workload-driver';
import { withLiveCluster } from './live-cluster.js';

// A run's leftovers must not act on the next run's locks. An MCS waiter that gave up behind a cut
// queue keeps watching its queue node for a grant that never comes; the next run's client of the
// same index reuses that queue node, so a grant to the new client woke the old waiter too, which
// passed the lock on from a node it no longer owned: two writers at once. This is how a live
// RMA-RW run (after MCS in the same cluster) broke exclusion where the sim, one run per cluster,
// never could. Compute nodes now refuse the previous run's verbs when they prepare a new run.

/**
 * MCS with a 1 µs successor-link timeout on live (a link takes ~100 µs): almost every hand-over to a
 * waiter still linking cuts the queue. Almost: how the hand-overs interleave is the machine's, and
 * one clean-clone CI saw a 300-operation run end with no waiter cut off, so the run is repeated (up
 * to three times) until one leaves waiters behind, the precondition of both cases.
 */
async function leaveCutWaiters(state: ClusterState): Promise<number> {
  let failures = 0;
  for (let attempt = 0; attempt < 3 && failures === 0; attempt++) {
    const result = await runLive({
      state,
      protocol: 'mcs',
      protocolOptions: { ...liveOptions('mcs'), releaseLinkTimeoutNs: 1_000 },
      spec: { clients: 12, locks: 1, readRatio: 0, distribution: 'uniform', operations: 300, thinkNs: 0, criticalSectionNs: 0, seed: 402 + attempt, timeoutMs: 50 },
    });
    failures = result.summary.acquireFailures;
  }
  return failures;
}

/**
 * The contended RMA-RW run of live-protocols (12 clients, 3 locks, 40 % readers), bounded to 5 s
 * with 2 s acquire timeouts: under the mutant, leftovers can also leave a lock held for good.
 */
async function rmaRwViolations(state: ClusterState, mutantKeepOldRunVerbs: boolean) {
  const result = await runLive({
    state,
    protocol: 'rma-rw',
    protocolOptions: liveOptions('rma-rw'),
    spec: { clients: 12, locks: 3, readRatio: 0.4, distribution: 'uniform', operations: 600, durationMs: 5_000, thinkNs: 0, criticalSectionNs: 20_000, seed: 11, timeoutMs: 2_000 },
    ...(mutantKeepOldRunVerbs ? { mutantKeepOldRunVerbs } : {}),
  });
  return checkHistory(result.history);
}

describe('live: a run after one that left MCS waiters behind a cut queue', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>>;
  beforeAll(async () => {
    cluster = await withLiveCluster({ withSwitch: false, withCoordinator: false });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('keeps exclusion: the leftover waiters are refused', async () => {
    expect(await leaveCutWaiters(cluster.state)).toBeGreaterThan(0);
    const verdict = await rmaRwViolations(cluster.state, false);
    expect(verdict.violations, summarizeVerdict(verdict)).toEqual([]);
  });

  it("mutant: with the previous run's verbs left open, the leftovers hand out locks twice", async () => {
    expect(await leaveCutWaiters(cluster.state)).toBeGreaterThan(0);
    const verdict = await rmaRwViolations(cluster.state, true);
    expect(verdict.violations.length).toBeGreaterThan(0);
  });
});
