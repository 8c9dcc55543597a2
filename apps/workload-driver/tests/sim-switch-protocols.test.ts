import { describe, expect, it } from 'vitest';
import { protocolById } from '@lockfabric/lock-catalog';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { runInMemory } from '@lockfabric/harness';

const spec: WorkloadSpec = { clients: 8, locks: 4, readRatio: 0.4, distribution: 'uniform', operations: 300, thinkNs: 500, criticalSectionNs: 2_000, seed: 1, timeoutMs: 20 };

describe('sim: switch protocols run through the emulated switch', () => {
  it.each(['srvlock', 'parlock', 'netlock', 'fisslock'])('%s: 20 seeds pass the checker, every packet through the switch model', async (id) => {
    for (let seed = 1; seed <= 20; seed++) {
      const result = await runInMemory({ substrate: 'sim', protocol: protocolById(id), spec: { ...spec, seed }, computeNodes: 3 });
      expect(result.verdict.violations, `${id} seed ${seed}`).toEqual([]);
      expect(result.cutOff, `${id} seed ${seed}`).toBe(false);
      expect(result.summary.acquires, `${id} seed ${seed}`).toBeGreaterThan(200);
    }
  });

  it('srvlock: a lossy, reordering switch never breaks exclusion', async () => {
    for (let seed = 1; seed <= 10; seed++) {
      const result = await runInMemory({
        substrate: 'sim',
        protocol: protocolById('srvlock'),
        spec: { ...spec, seed },
        computeNodes: 3,
        switchFaults: { rules: [{ loss: 0.05, duplicate: 0.05, reorder: 0.05, reorderNsMax: 5_000 }] },
      });
      expect(result.verdict.violations, `seed ${seed}`).toEqual([]);
      expect(result.cutOff).toBe(false);
    }
  });
});
