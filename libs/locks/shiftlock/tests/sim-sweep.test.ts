import { summarizeVerdict } from '@lockfabric/check';
import { runInMemory } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { shiftlock } from '../src/index.js';
import { readerBypass, writerFifo } from './support/ordering.js';

/** Covers the spread of invoke-to-linearisation delays (verb latency jitter, NIC queueing, poll pacing). */
const ORDER_SLACK_NS = 3_000;
const THRESHOLDS = [1, 2, 4, 16, Infinity] as const;
const READ_RATIOS = [0, 0.25, 0.5, 0.75, 0.95] as const;

/** Seed → a small, hot workload: 4–12 clients on 1–4 locks, 100–200 operations, every mode mix and N. */
function caseFor(seed: number): { spec: WorkloadSpec; options: ProtocolOptions; threshold: number } {
  const threshold = THRESHOLDS[seed % THRESHOLDS.length]!;
  const spec: WorkloadSpec = {
    clients: 4 + (seed % 9),
    locks: 1 + ((seed >> 2) % 4),
    readRatio: READ_RATIOS[Math.floor(seed / 5) % READ_RATIOS.length]!,
    distribution: seed % 3 === 0 ? { zipf: 0.99 } : 'uniform',
    operations: 100 + ((seed * 37) % 101),
    thinkNs: (seed * 131) % 2_000,
    criticalSectionNs: (seed * 197) % 3_000,
    seed,
  };
  const options: ProtocolOptions = {
    consecutiveWriters: Number.isFinite(threshold) ? threshold : 'inf',
    ...(seed % 7 === 0 ? { pollIntervalNs: 0 } : {}),
    ...(seed % 11 === 0 ? { hardenedTransfer: true } : {}),
  };
  return { spec, options, threshold };
}

describe('sim sweep: 500 seeds, mixed modes, high contention, no faults', () => {
  for (let block = 0; block < 5; block++) {
    it(`seeds ${block * 100 + 1}–${block * 100 + 100}: exclusion, liveness, writer FIFO, reader wait ≤ N writers`, async () => {
      let holds = 0;
      for (let seed = block * 100 + 1; seed <= block * 100 + 100; seed++) {
        const { spec, options, threshold } = caseFor(seed);
        const result = await runInMemory({ substrate: 'sim', protocol: shiftlock, protocolOptions: options, spec, jitterNs: 400 });
        const where = `seed ${seed} ${JSON.stringify(options)}`;
        expect(result.verdict.ok, `${where}\n${summarizeVerdict(result.verdict)}`).toBe(true);
        expect(result.cutOff, where).toBe(false);
        expect(result.summary.acquires, where).toBe(spec.operations);
        const fifo = writerFifo(result.history, ORDER_SLACK_NS);
        expect(fifo.violationCount, `${where}: writers out of enqueue order`).toBe(0);
        const bypass = readerBypass(result.history, ORDER_SLACK_NS);
        expect(bypass.maxOvertakes, `${where}: a reader waited through more than N writers`).toBeLessThanOrEqual(threshold);
        holds += result.verdict.stats.holds;
      }
      expect(holds).toBeGreaterThan(10_000);
    }, 60_000);
  }
});
