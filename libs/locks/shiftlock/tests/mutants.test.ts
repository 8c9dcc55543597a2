import { HistoryRecorder, summarizeVerdict } from '@lockfabric/check';
import { runInMemory } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { shiftlock } from '../src/index.js';
import { readerBypass, writerFifo } from './support/ordering.js';
import { simRun } from './support/sim-run.js';

/** First seed in 1..maxSeeds for which `caught` holds, or undefined. */
async function firstCaught(maxSeeds: number, caught: (seed: number) => Promise<boolean>): Promise<number | undefined> {
  for (let seed = 1; seed <= maxSeeds; seed++) if (await caught(seed)) return seed;
  return undefined;
}

describe('mutants and paper-literal defects are caught within a bounded number of seeds', () => {
  it('mutantSkipReaderWait (a writer enters past the readers inside): exclusion violation', async () => {
    const spec = (seed: number): WorkloadSpec => ({ clients: 8, locks: 1, readRatio: 0.5, distribution: 'uniform', operations: 150, thinkNs: 500, criticalSectionNs: 1_000, seed });
    const run = (seed: number, options: ProtocolOptions) => runInMemory({ substrate: 'sim', protocol: shiftlock, protocolOptions: options, spec: spec(seed) });
    const seed = await firstCaught(5, async (s) => (await run(s, { mutantSkipReaderWait: true })).verdict.violations.length > 0);
    expect(seed).toBeDefined();
    for (let s = 1; s <= seed!; s++) expect((await run(s, {})).verdict.violations).toEqual([]);
  });

  it('paperLiteralEpoch (A1): readers stuck behind a stale-epoch release; a recovery happens with no failure injected (I13)', async () => {
    const spec = (seed: number): WorkloadSpec => ({ clients: 8, locks: 1, readRatio: 0.3, distribution: 'uniform', operations: 200, thinkNs: 200, criticalSectionNs: 100, seed });
    const resets = async (seed: number, paperLiteralEpoch: boolean) => {
      const result = await simRun({ spec: spec(seed), protocolOptions: { consecutiveWriters: 2, leaseNs: 50_000, paperLiteralEpoch } });
      expect(result.crashed.size).toBe(0);
      expect(result.verdict.violations).toEqual([]);
      return result.servers[0]!.stats.accepted;
    };
    const seed = await firstCaught(20, async (s) => (await resets(s, true)) > 0);
    expect(seed).toBeDefined();
    for (let s = 1; s <= seed!; s++) expect(await resets(s, false), `fixed, seed ${s}`).toBe(0);
  });

  it('mutantEpochBeforeLeap (A8, the artifact order): after a reset a waiting reader mistakes Epoch = 0 for a flip and enters beside a writer', async () => {
    const spec = (seed: number): WorkloadSpec => ({ clients: 10, locks: 3, readRatio: 0.5, distribution: 'uniform', operations: 200, thinkNs: 300, criticalSectionNs: 20_000, seed });
    const run = (seed: number, mutantEpochBeforeLeap: boolean) =>
      simRun({ spec: spec(seed), protocolOptions: { consecutiveWriters: 2, leaseNs: 100_000, mutantEpochBeforeLeap }, crashProbability: 0.02 });
    const seed = await firstCaught(20, async (s) => (await run(s, true)).verdict.violations.length > 0);
    expect(seed).toBeDefined();
    for (let s = 1; s <= seed!; s++) {
      const result = await run(s, false);
      expect(result.verdict.ok, `correct order, seed ${s}\n${summarizeVerdict(result.verdict)}`).toBe(true);
    }
  });
});

describe('the ordering checkers used by the sweep can fail', () => {
  it('reader wait bound: N = ∞ runs overtake readers by far more writers than 16; N = 16 runs never do', async () => {
    const spec = (seed: number): WorkloadSpec => ({ clients: 12, locks: 1, readRatio: 0.2, distribution: 'uniform', operations: 300, thinkNs: 200, criticalSectionNs: 500, seed });
    const worst = async (consecutiveWriters: number | string) => {
      let max = 0;
      for (let seed = 1; seed <= 4; seed++) {
        const result = await runInMemory({ substrate: 'sim', protocol: shiftlock, protocolOptions: { consecutiveWriters }, spec: spec(seed), jitterNs: 400 });
        max = Math.max(max, readerBypass(result.history, 3_000).maxOvertakes);
      }
      return max;
    };
    expect(await worst('inf')).toBeGreaterThan(16);
    expect(await worst(16)).toBeLessThanOrEqual(16);
  });

  it('reader wait bound and writer FIFO flag hand-made bad histories', () => {
    const history = new HistoryRecorder();
    history.invoke('1/0', 'acquire', 0, 'shared', 0);
    for (let w = 1; w <= 3; w++) history.invoke(`1/${w}`, 'acquire', 0, 'exclusive', 10_000 * w);
    for (let w = 3; w >= 1; w--) history.ok(`1/${w}`, 'acquire', 0, 'exclusive', 100_000 - 10_000 * w);
    history.ok('1/0', 'acquire', 0, 'shared', 200_000);
    expect(readerBypass(history, 3_000).maxOvertakes).toBe(3);
    // Writers 1/1..1/3 asked in that order and were granted in the reverse one.
    const fifo = writerFifo(history, 3_000);
    expect(fifo.ok).toBe(false);
    expect(fifo.maxOvertakesObserved).toBe(2);
  });
});
