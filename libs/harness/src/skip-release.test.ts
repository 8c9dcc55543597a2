import { summarizeVerdict } from '@lockfabric/check';
import { protocolById } from '@lockfabric/lock-catalog';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from './in-memory-run.js';

// ShiftLock Fig. 13: a client skips its release with probability p and carries on. Protocols with
// recovery get the lock back; a plain spinlock never does, which is how we know the skip leaks it.
const spec: WorkloadSpec = { clients: 8, locks: 20, readRatio: 0, distribution: { zipf: 0.99 }, operations: 1_500, thinkNs: 0, criticalSectionNs: 0, seed: 4 };

describe('skipped releases (ShiftLock Fig. 13) on sim', () => {
  for (const protocol of ['shiftlock', 'dslr']) {
    it(`${protocol} recovers the leaked locks: every operation finishes, exclusion holds`, async () => {
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(protocol), spec, skipReleaseProbability: 0.01 });
      expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
      expect(result.cutOff).toBe(false);
      const skipped = result.summary.failuresByCode['RELEASE_SKIPPED'] ?? 0;
      expect(skipped).toBeGreaterThan(5);
      expect(result.summary.acquires + (result.summary.failuresByCode['LOCK_ABORTED'] ?? 0) + (result.summary.failuresByCode['LOCK_TIMEOUT'] ?? 0)).toBeGreaterThanOrEqual(1_500);
    }, 120_000);
  }

  it('caslock has no recovery: after a skipped release its lock is never granted again', async () => {
    const result = await runInMemory({ substrate: 'sim', protocol: protocolById('caslock'), spec: { ...spec, timeoutMs: 1 }, skipReleaseProbability: 0.01 });
    expect(result.summary.failuresByCode['RELEASE_SKIPPED'] ?? 0).toBeGreaterThan(0);
    expect(result.summary.failuresByCode['LOCK_TIMEOUT'] ?? 0).toBeGreaterThan(0);
  }, 120_000);
});
