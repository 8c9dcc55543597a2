import { checkHistory, summarizeVerdict } from '@lockfabric/check';
import { LocalChaos, runLive } from '@lockfabric/workload-driver';
import type { ProcessRecord } from '@lockfabric/workload-driver';
import { describe, expect, it } from 'vitest';
import { liveClusterForSuite } from './live-cluster.js';
import { MS, liveNowNs, metric, nodeOf, survivorsOf, waitFor } from './live-chaos-support.js';

// rpc and traditional: the lock manager runs on the memory node's CPU, in its process (a separate
// OS process here, as are the coordinator and both compute nodes). SIGKILL compute-2 while its
// client holds the only lock, and start compute-1's clients only once the memory node has fenced
// compute-2: their first acquires then find the lock held by a dead node unless the memory node's
// lock manager dropped that hold on the fence. Nothing here is timed: acquires never time out in
// a passing run, and the survivors are started by the fence, not by a clock.

const VICTIM = 2;
const SURVIVOR = 1;
/** Heartbeats every 100 ms; 10 misses (not 3) so a survivor slowed by the loaded machine is not taken for dead. */
const MISSES = 10;
/** Acquires compute-2 has reported before the kill: its clients are past their first hold. */
const STARTED_OPS = 2;
/** Decides nothing in a passing run (a survivor waits at most for the other's 100 ms hold); without the drop every survivor acquire ends in LOCK_TIMEOUT. */
const TIMEOUT_MS = 20_000;

describe('live chaos: SIGKILL a compute node holding a memory-node lock manager’s lock', () => {
  const cluster = liveClusterForSuite({ withSwitch: false, computeNodes: 2, env: { LOCKFABRIC_COORDINATOR_MISSES_BEFORE_SUSPECT: String(MISSES) } });

  it.each(['rpc', 'traditional'])('%s: the memory node drops the dead node’s hold on its fence; the survivors get the lock', async (protocol) => {
    const { state, dir } = cluster();
    const memory = state.processes.find((p): p is ProcessRecord => p.role === 'memory')!;
    const chaos = new LocalChaos(dir);
    // compute-2 of the previous case was restarted: wait until the memory node admits it again.
    await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 0, 60_000, 'memory node admits compute-2 again');
    let fenced: () => void = () => undefined;
    const survivorsMayStart = new Promise<void>((resolve) => (fenced = resolve));
    let opsDone: ((node: number) => number) | undefined;
    // One lock, held by one client at a time for 100 ms, with no pause between acquires: at the
    // kill, one of compute-2's two clients holds it and the other asks for it. Each node runs for
    // 5 s from its own start: compute-2 is killed after its second acquire (~0.2 s in), and the
    // survivors' two clients take turns on the lock some 25 times each.
    const run = runLive({
      state,
      protocol,
      spec: { clients: 4, locks: 1, readRatio: 0, distribution: 'uniform', durationMs: 5_000, thinkNs: 0, criticalSectionNs: 100 * MS, seed: 23, timeoutMs: TIMEOUT_MS },
      protocolOptions: { maxAttempts: '1000' },
      tolerateNodeFailures: true,
      beforeNodeStart: async (node, progress) => {
        opsDone = progress.opsDone;
        if (node === SURVIVOR) await survivorsMayStart;
      },
    });
    run.catch(() => undefined);
    try {
      await waitFor(() => (opsDone?.(VICTIM) ?? 0) >= STARTED_OPS, 60_000, `compute-2 past ${STARTED_OPS} acquires`);
      const killedAtNs = liveNowNs();
      await chaos.kill(`compute-${VICTIM}`);
      await waitFor(async () => (await metric(memory, 'lockfabric_memory_fenced_nodes')) === 1, 60_000, 'the memory node fences compute-2');
      fenced();
      const result = await run;

      expect(result.failedNodes.map((f) => f.node), JSON.stringify(result.failedNodes)).toStrictEqual([VICTIM]);
      const survivors = survivorsOf(result, VICTIM);
      expect(new Set(survivors.map(nodeOf))).toStrictEqual(new Set([SURVIVOR]));
      const acquires = survivors.filter((e) => e.op === 'acquire' && e.phase !== 'invoke');
      // Every survivor acquire was granted, and both clients got the lock: the dead node's hold was gone.
      expect(acquires.filter((e) => e.phase === 'fail').map((e) => e.error)).toStrictEqual([]);
      expect(new Set(acquires.filter((e) => e.phase === 'ok').map((e) => e.client))).toStrictEqual(new Set([`${SURVIVOR}/0`, `${SURVIVOR}/1`]));
      // Exclusion over the whole run: compute-2's last hold ends at the kill, before any survivor's.
      const failedClients = Object.fromEntries([0, 1].map((i) => [`${VICTIM}/${i}`, killedAtNs]));
      const verdict = checkHistory(result.history, { failedClients });
      expect(verdict.ok, summarizeVerdict(verdict)).toBe(true);
    } finally {
      fenced();
      await run.catch(() => undefined);
      // a new incarnation of compute-2 for the next case, which the memory node admits again
      await chaos.restart(`compute-${VICTIM}`);
    }
  }, 300_000);
});
