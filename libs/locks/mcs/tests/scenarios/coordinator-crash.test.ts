import { failureRecoveryReport, runInMemory } from '@lockfabric/harness';
import type { InMemoryRunResult } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { mcs } from '../../src/index.js';

const MS = 1_000_000;
const LOCKS = 3;
const spec = (seed: number) => ({ clients: 9, locks: LOCKS, readRatio: 0, distribution: 'uniform' as const, durationMs: 40, thinkNs: 20_000, criticalSectionNs: 1_000_000, seed, timeoutMs: 10 });
/** Compute node 3 dies at 10 ms; detection after 2 ms of silence (~11.3 ms), the queue-lock recovery then runs for a few ms. */
const nodeFailure = { computeNode: 2, atMs: 10, detectionMs: 2 };
/**
 * The coordinator dies at 11.4 ms, in the middle of that recovery (survivors gated, table not reset),
 * and is back 3 ms later. (With the dead node's verbs cut, as after a SIGKILL, seed 2's recovery is
 * done by 12 ms, so the crash comes earlier than it first did.)
 */
const crash = { atMs: 11.4, downMs: 3 };

/** Locks some survivor acquired after `fromNs`. */
function acquiredAfter(result: InMemoryRunResult, fromNs: number): Set<number> {
  return new Set([...result.history.events()].filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > fromNs).map((e) => e.lock));
}

describe('mcs: coordinator: recovery: crash and restart in the middle of a queue-lock recovery', () => {
  it('exclusion holds and every lock is acquirable after the restarted coordinator repairs the queues; without that repair (mutant) they stay blocked', async () => {
    const mutantGranted: number[] = [];
    for (const seed of [1, 2, 3]) {
      const result = await runInMemory({ substrate: 'sim', protocol: mcs, spec: spec(seed), computeNodes: 3, nodeFailure, coordinatorCrash: crash });
      const where = `seed ${seed}`;
      expect(result.verdict.ok, where).toBe(true);
      expect(result.cutOff, where).toBe(false);
      const [first, second] = result.control!.lives;
      // the crash came mid-recovery: the death was declared (notice out), the queue-lock recovery not finished
      expect(first, where).toMatchObject({ recoveriesBegun: 1, recoveriesOpen: 1, queueRecoveriesDone: 0 });
      // (promise continuations under the virtual scheduler may run a few µs late)
      expect((first?.crashedAtNs ?? 0) / MS, where).toBeCloseTo(11.4, 1);
      expect((second?.startedAtNs ?? 0) / MS, where).toBeCloseTo(14.4, 1);
      // live: every lock is granted again once the new instance has warmed up and repaired
      expect(acquiredAfter(result, 20 * MS), where).toStrictEqual(new Set([0, 1, 2]));

      const mutant = await runInMemory({ substrate: 'sim', protocol: mcs, spec: spec(seed), computeNodes: 3, nodeFailure, coordinatorCrash: { ...crash, mutantSkipRestartRecovery: true } });
      expect(mutant.verdict.violations, `${where} (mutant)`).toStrictEqual([]);
      mutantGranted.push(acquiredAfter(mutant, 20 * MS).size);
    }
    // Where the dead node sat in a queue at the crash, the mutant leaves that queue blocked.
    expect(Math.min(...mutantGranted), 'the mutant leaves queues naming the dead node blocked').toBeLessThan(LOCKS);
  });

  it('without a crash the first coordinator finishes the queue-lock recovery itself (the baseline)', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: mcs, spec: spec(1), computeNodes: 3, nodeFailure });
    expect(result.verdict.ok).toBe(true);
    const failure = result.nodeFailure!;
    expect(failureRecoveryReport([...result.history.events()], failure.node, failure.failedAtNs).neverFreed).toStrictEqual([]);
    expect(acquiredAfter(result, failure.reportedAtNs + 5 * MS)).toStrictEqual(new Set([0, 1, 2]));
  });
});
