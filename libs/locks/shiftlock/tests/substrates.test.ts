import { summarizeVerdict } from '@lockfabric/check';
import { runInMemory } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { shiftlock } from '../src/index.js';

describe('shiftlock through the shared harness', () => {
  it('embedded (real time, one process): the same code passes the checker', async () => {
    const result = await runInMemory({
      substrate: 'embedded',
      protocol: shiftlock,
      // Real time on a loaded CI machine: a lease long enough that a slow holder is not suspected.
      protocolOptions: { leaseNs: 500_000_000 },
      spec: { clients: 6, locks: 1, readRatio: 0.5, distribution: 'uniform', operations: 120, thinkNs: 0, criticalSectionNs: 0, seed: 3, timeoutMs: 2_000 },
    });
    expect(result.verdict.ok, summarizeVerdict(result.verdict)).toBe(true);
    expect(result.summary.acquires).toBe(120);
  }, 60_000);

  it('runInMemory with crashes: recovery=one-sided needs no server on the memory node (20 seeds)', async () => {
    let crashed = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const result = await runInMemory({
        substrate: 'sim',
        protocol: shiftlock,
        protocolOptions: { recovery: 'one-sided', leaseNs: 100_000 },
        crashProbability: 0.01,
        spec: { clients: 8, locks: 2, readRatio: 0.5, distribution: 'uniform', operations: 200, thinkNs: 500, criticalSectionNs: 1_000, seed },
      });
      expect(result.verdict.ok, `seed ${seed}\n${summarizeVerdict(result.verdict)}`).toBe(true);
      expect(result.cutOff).toBe(false);
      crashed += result.crashed.size;
    }
    expect(crashed).toBeGreaterThan(10);
  });
});
