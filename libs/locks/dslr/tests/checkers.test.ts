/** The test-side checkers are checkers too: each must fail on a broken input. */
import { describe, expect, it } from 'vitest';
import { runInMemory } from '@lockfabric/harness';
import { caslock } from '@lockfabric/lock-caslock';
import type { HistoryEvent } from '@lockfabric/check';
import { dslr } from '../src/index.js';
import { checkConflictFcfs } from '@lockfabric/check';

const ev = (client: string, mode: 'shared' | 'exclusive', phase: 'invoke' | 'ok' | 'fail', timeNs: number, error?: string): HistoryEvent => ({
  client,
  lock: 0,
  mode,
  op: 'acquire',
  phase,
  timeNs,
  ...(error ? { error } : {}),
});

describe('conflict-aware FCFS checker', () => {
  it('flags a writer granted while an earlier conflicting request still waits', () => {
    const history = [ev('a', 'shared', 'invoke', 0), ev('b', 'exclusive', 'invoke', 5_000), ev('b', 'exclusive', 'ok', 6_000), ev('a', 'shared', 'ok', 20_000)];
    const report = checkConflictFcfs(history, { slackNs: 1_000 });
    expect(report.ok).toBe(false);
    expect(report.violations[0]).toMatchObject({ earlier: { client: 'a' }, later: { client: 'b' } });
  });

  it('lets readers pass readers, tolerates the slack, and excuses skipped tickets', () => {
    const readers = [ev('a', 'shared', 'invoke', 0), ev('b', 'shared', 'invoke', 5_000), ev('b', 'shared', 'ok', 6_000), ev('a', 'shared', 'ok', 20_000)];
    expect(checkConflictFcfs(readers, { slackNs: 1_000 }).ok).toBe(true);
    const close = [ev('a', 'exclusive', 'invoke', 0), ev('b', 'exclusive', 'invoke', 500), ev('b', 'exclusive', 'ok', 6_000), ev('a', 'exclusive', 'ok', 20_000)];
    expect(checkConflictFcfs(close, { slackNs: 1_000 }).ok).toBe(true);
    const skipped = [ev('a', 'exclusive', 'invoke', 0), ev('b', 'exclusive', 'invoke', 5_000), ev('b', 'exclusive', 'ok', 6_000), ev('a', 'exclusive', 'fail', 20_000, 'LockAbortedError')];
    expect(checkConflictFcfs(skipped, { slackNs: 1_000 }).ok).toBe(false);
    expect(checkConflictFcfs(skipped, { slackNs: 1_000, excusedErrors: ['LockAbortedError'] }).ok).toBe(true);
  });

  it('finds the CAS lock unfair and DSLR first-come-first-served on the same workload', async () => {
    const spec = { clients: 8, locks: 1, readRatio: 0.5, distribution: 'uniform' as const, operations: 200, thinkNs: 500, criticalSectionNs: 3_000, seed: 3, timeoutMs: 50 };
    const cas = await runInMemory({ substrate: 'sim', protocol: caslock, protocolOptions: { variant: 'rw' }, spec });
    const fair = await runInMemory({ substrate: 'sim', protocol: dslr, spec });
    expect(checkConflictFcfs(cas.history, { slackNs: 1_000 }).ok).toBe(false);
    const report = checkConflictFcfs(fair.history, { slackNs: 1_000 });
    expect(report.ok).toBe(true);
    expect(report.pairsChecked).toBeGreaterThan(100);
  });
});
