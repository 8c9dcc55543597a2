import { afterAll, describe, expect, it } from 'vitest';
import { summarizeVerdict } from '@lockfabric/check';
import type { HistoryEvent } from '@lockfabric/check';
import { runLive } from '@lockfabric/workload-driver';
import type { LiveRunResult } from '@lockfabric/workload-driver';
import { waitFor } from '@lockfabric/testkit';
import { withLiveCluster } from './live-cluster.js';

// Two runs on one live cluster (forward switch, a memory node, compute nodes 1 and 2): srvlock,
// whose lock server (node 1) lingers after the run for peers' clients, then parlock, with node 1's
// Run held back until node 2's client holds lock 0 — which parlock homes on node 1.
// Without the start barrier, the lingering srvlock server grants node 2's acquire before node 1's
// parlock manager exists; that manager then grants node 1 the same lock: exclusion overlaps.
// With the barrier (the driver's default), node 1 was prepared before any client ran, so its
// parlock manager granted node 2 and queues node 1 behind it.
const serverOptions = { retransmitNs: '20000000', maxAttempts: '400' };
/** Long enough that node 1 starts while node 2 still holds (node 1 starts within ~1 s of the grant). */
const HOLD_NS = 4e9;

describe('live: start barrier between runs on one cluster', () => {
  let cluster: Awaited<ReturnType<typeof withLiveCluster>> | undefined;
  afterAll(async () => {
    await cluster?.stop();
  });

  async function srvlockThenStaggeredParlock(startBarrier: boolean): Promise<LiveRunResult> {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: 'forward' });
    const state = cluster.state;
    const computes = state.processes.filter((p) => p.role === 'compute').map((p) => p.node).sort((a, b) => a - b);
    const [first, second] = [computes[0]!, computes[1]!];
    // One client: it runs on the first compute node, the srvlock server; the second node hosts none.
    const srv = await runLive({ state, protocol: 'srvlock', protocolOptions: serverOptions, spec: { clients: 1, locks: 1, readRatio: 0, distribution: 'uniform', operations: 10, thinkNs: 0, criticalSectionNs: 0, seed: 5, timeoutMs: 20_000 } });
    expect(srv.verdict?.ok).toBe(true);
    return runLive({
      state,
      protocol: 'parlock',
      protocolOptions: serverOptions,
      startBarrier,
      spec: { clients: 2, locks: 1, readRatio: 0, distribution: 'uniform', operations: 2, thinkNs: 0, criticalSectionNs: HOLD_NS, seed: 9, timeoutMs: 30_000 },
      beforeNodeStart: async (node, progress) => {
        if (node === first) await waitFor(() => progress.opsDone(second) >= 1, { timeoutMs: 20_000, what: `compute node ${second}'s acquire of lock 0` });
      },
    });
  }

  /** When node 1's acquire completed relative to node 2's release (the overlap needs the first before the second). */
  function staging(history: readonly HistoryEvent[]): string {
    const at = (client: string, op: string, phase: string) => history.find((e) => e.client.startsWith(client) && e.op === op && e.phase === phase)?.timeNs;
    const clients = [...new Set(history.map((e) => e.client))].sort();
    const [c1, c2] = [clients[0] ?? '?', clients[1] ?? '?'];
    return `${c1} acquired at ${at(c1, 'acquire', 'ok')}, ${c2} released at ${at(c2, 'release', 'invoke')}`;
  }

  it('reproduction, one-phase start (as drivers before the barrier): the lingering srvlock server grants beside the new parlock manager', async () => {
    const result = await srvlockThenStaggeredParlock(false);
    expect(result.unpreparedNodes).toEqual([]);
    expect(result.summary.acquires).toBe(2);
    // The checker sees the double grant of lock 0.
    expect(result.verdict?.ok, `no overlap (${staging(result.history)})\n${result.verdict ? summarizeVerdict(result.verdict) : ''}`).toBe(false);
    expect(result.verdict?.violations.map((v) => v.lock)).toContain(0);
  });

  it('two-phase start (default): every node prepared first, so node 1 waits for node 2 and the history is clean', async () => {
    const result = await srvlockThenStaggeredParlock(true);
    expect(result.verdict?.violations, result.verdict ? summarizeVerdict(result.verdict) : '').toEqual([]);
    expect(result.verdict?.ok).toBe(true);
    expect(result.summary.acquires).toBe(2);
    expect(result.summary.acquireFailures).toBe(0);
    expect(result.unpreparedNodes).toEqual([]);
  });

  // The same run twice: the first leaves DecLock messages queued in some clients' mailboxes (a
  // client that finished never reads them). Before the barrier the second run's clients of the same
  // index took them as theirs and the run hung (3 of 3 here); a Prepare now drops what is queued,
  // since no client of the new run can have sent anything yet.
  it('declock-cql twice: the second run is not fed the first run\'s leftover mail', async () => {
    cluster ??= await withLiveCluster({ withCoordinator: false, switchProgram: 'forward' });
    const spec = { clients: 12, locks: 3, readRatio: 0.4, distribution: 'uniform' as const, operations: 600, thinkNs: 0, criticalSectionNs: 20_000, seed: 11, timeoutMs: 20_000 };
    for (const round of [1, 2]) {
      const result = await runLive({ state: cluster.state, protocol: 'declock-cql', spec });
      expect(result.verdict?.ok, `round ${round}`).toBe(true);
      expect(result.summary.acquires, `round ${round}`).toBe(600);
    }
  });
});
