import { runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { declockCql } from '../src/index.js';

describe('declock-cql on the embedded substrate (real time)', () => {
  it('runs the same code in real time and passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: declockCql,
      // Real time on a shared machine: one handover can take a millisecond, so waiters get more
      // than the 10 ms default before they suspect a lost grant.
      protocolOptions: { acquireTimeoutNs: 500_000_000 },
      spec: { clients: 6, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 150, thinkNs: 0, criticalSectionNs: 0, seed: 3, timeoutMs: 2_000 },
    });
    expect(result.verdict.ok).toBe(true);
    expect(result.cutOff).toBe(false);
    expect(result.summary.acquires).toBe(150);
  });
});
