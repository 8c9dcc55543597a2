import { HistoryRecorder, checkHistory, summarizeVerdict } from '@lockfabric/check';
import type { ClientPorts } from '@lockfabric/ports';
import { createSimCluster } from '@lockfabric/sim';
import { RunStats, runClients } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { declock } from '../src/index.js';
import { sweepTrace } from './sweep-support.js';

/**
 * A live compute node keeps one mailbox per client index for its whole life, and every run builds
 * new clients on it (with a new lock-table layout object, so new per-node state). A client of an
 * earlier run must not keep receiving from that mailbox: it would take the next run's grants and
 * drop them as stale, and the next run's waiters would time out and reset instead of being granted.
 */
describe('declock: a finished run leaves no receiver on the mailboxes the next run reuses', () => {
  it('the second run on the same mailboxes gets every grant: no waiter times out, no reset', async () => {
    const { cluster, scheduler } = createSimCluster({ seed: 5, lockCount: 1, entryBytes: declock.entryBytes, jitterNs: 200, computeNodes: 2 });
    const spec: WorkloadSpec = { clients: 6, locks: 1, readRatio: 0, distribution: 'uniform', operations: 300, thinkNs: 1_000, criticalSectionNs: 3_000, seed: 5, timeoutMs: 50 };
    const runOnce = async (trace: ReturnType<typeof sweepTrace>) => {
      // A fresh layout object per run, as a compute node builds one per RunRequest.
      const locks = { ...cluster.layout };
      const ports: ClientPorts[] = Array.from({ length: spec.clients }, (_, i) => ({ ...cluster.clientPorts({ node: cluster.computeNodeIds[i % 2]!, client: i }), locks, trace: trace.trace }));
      const recorder = new HistoryRecorder();
      let done = false;
      const run = runClients({ protocol: declock, spec, ports, recorder, stats: new RunStats(), clock: cluster.clock }).finally(() => (done = true));
      await scheduler.run({ stop: () => done });
      await run;
      return checkHistory(recorder);
    };
    const first = sweepTrace();
    expect((await runOnce(first)).ok).toBe(true);
    const second = sweepTrace();
    const verdict = await runOnce(second);
    expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    expect([...second.resets], 'resets in the second run').toEqual([]);
  });
});
