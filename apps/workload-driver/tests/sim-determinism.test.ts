import { availableProtocols } from '@lockfabric/lock-catalog';
import { parseDistribution } from '@lockfabric/workloads';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { describe, expect, it } from 'vitest';
import { runInMemory } from '../src/run/in-memory.js';

/** Contended enough that queues form, waiters spin on local words and same-time events tie. */
const spec: WorkloadSpec = {
  clients: 24,
  locks: 6,
  readRatio: 0.5,
  distribution: parseDistribution('zipf:0.99'),
  operations: 240,
  thinkNs: 0,
  criticalSectionNs: 500,
  seed: 4242,
  timeoutMs: 20,
};

describe('sim: every protocol replays bit-identically', () => {
  for (const protocol of availableProtocols()) {
    it(`${protocol.id}: the same bench run twice gives the same digest, verbs and event count`, async () => {
      const run = () => runInMemory({ substrate: 'sim', protocol: protocol.id, spec, crashProbability: 0.02 });
      const a = await run();
      const b = await run();
      expect(a.summary.acquires).toBeGreaterThan(0);
      expect(b.digest).toBe(a.digest);
      expect(b.verbs).toEqual(a.verbs);
      expect(b.simEvents).toBe(a.simEvents);
    });
  }
});
