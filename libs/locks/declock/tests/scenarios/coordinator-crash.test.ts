import { failureRecoveryReport, runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { declock } from '../../src/index.js';

const MS = 1_000_000;
const spec = (seed: number) => ({ clients: 6, locks: 3, readRatio: 0, distribution: 'uniform' as const, durationMs: 40, thinkNs: 20_000, criticalSectionNs: 100_000, seed, timeoutMs: 10 });
const nodeFailure = { computeNode: 2, atMs: 10, detectionMs: 2 };

describe('declock: coordinator: recovery: the coordinator crashes around a compute-node death', () => {
  it('crashed between the death and its detection: the restarted coordinator never heard the dead node, its first view leaves it out, nodes recover from that; safe and live', async () => {
    // seeds whose dead node holds a lock when it dies (the control plane's traffic shifts the schedule)
    for (const seed of [1, 2, 4]) {
      const result = await runInMemory({ substrate: 'sim', protocol: declock, spec: spec(seed), computeNodes: 3, nodeFailure, coordinatorCrash: { atMs: 10.5, downMs: 3 } });
      const where = `seed ${seed}`;
      expect(result.verdict.ok, where).toBe(true);
      expect(result.cutOff, where).toBe(false);
      const failure = result.nodeFailure!;
      // no FailureNotice: the first life crashed before detection; the node services heard the second life's first view (13.5 ms + warm-up)
      expect(result.control!.lives[0], where).toMatchObject({ recoveriesBegun: 0 });
      expect(failure.reportedAtNs, where).toBeGreaterThanOrEqual(15.5 * MS);
      const report = failureRecoveryReport([...result.history.events()], failure.node, failure.failedAtNs);
      expect(report.heldByDead.length, `${where}: the dead node held a lock`).toBeGreaterThan(0);
      expect(report.neverFreed, where).toStrictEqual([]);
    }
  });

  it('crashed just after it declared the death (recovery under way, its state lost): safe and live', async () => {
    for (const seed of [1, 2, 3]) {
      const result = await runInMemory({ substrate: 'sim', protocol: declock, spec: spec(seed), computeNodes: 3, nodeFailure, coordinatorCrash: { atMs: 11.4, downMs: 3 } });
      const where = `seed ${seed}`;
      expect(result.verdict.ok, where).toBe(true);
      expect(result.cutOff, where).toBe(false);
      expect(result.control!.lives[0], where).toMatchObject({ recoveriesBegun: 1, recoveriesOpen: 1 });
      const failure = result.nodeFailure!;
      expect(failureRecoveryReport([...result.history.events()], failure.node, failure.failedAtNs).neverFreed, where).toStrictEqual([]);
      const after = [...result.history.events()].filter((e) => e.op === 'acquire' && e.phase === 'ok' && e.timeNs > 20 * MS).map((e) => e.lock);
      expect(new Set(after), where).toStrictEqual(new Set([0, 1, 2]));
    }
  });
});
