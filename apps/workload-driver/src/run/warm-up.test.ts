import { describe, expect, it } from 'vitest';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { benchCommand } from '../commands/bench.js';
import { demoCommand } from '../commands/demo.js';
import { warmUpSpec } from './warm-up.js';

const micro: WorkloadSpec = { clients: 8, locks: 1_000, readRatio: 0.5, distribution: { zipf: 0.9 }, operations: 100_000, thinkNs: 0, criticalSectionNs: 1_000, seed: 7 };

describe('warmUpSpec', () => {
  it("keeps the run's workload shape with the warm-up's operation count and no duration", () => {
    expect(warmUpSpec({ ...micro, durationMs: 15_000 }, 1_000)).toEqual({ ...micro, operations: 1_000 });
  });

  it('gives every client at least one operation', () => {
    expect(warmUpSpec({ ...micro, clients: 64 }, 10)?.operations).toBe(64);
  });

  it('has none for 0 operations, transactions or application workloads', () => {
    expect(warmUpSpec(micro, 0)).toBeUndefined();
    expect(warmUpSpec({ ...micro, transactions: {} as NonNullable<WorkloadSpec['transactions']> }, 1_000)).toBeUndefined();
    expect(warmUpSpec({ ...micro, application: {} as NonNullable<WorkloadSpec['application']> }, 1_000)).toBeUndefined();
  });

  it('is a configuration error off live, where no service process runs', async () => {
    await expect(benchCommand(['--warmup-ops', '10'])).rejects.toThrow(/--warmup-ops: only live runs warm/);
    await expect(benchCommand(['--substrate', 'embedded', '--warmup-ops', '1'])).rejects.toThrow(/--warmup-ops/);
    await expect(demoCommand(['--substrate', 'sim', '--warmup-ops', '5'])).rejects.toThrow(/--warmup-ops: only live runs warm/);
  });
});
