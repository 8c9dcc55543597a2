import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import { alock } from '../src/index.js';

// Swarm seeds 508 and 602 (a compute node killed, clients co-located with the memory node): the
// coordinator's queue-lock recovery gated, drained and aborted only the compute nodes, then reset
// the lock table under the local cohort's holder on the memory node, and two local clients held
// one lock. Memory nodes now take part in the recovery like compute nodes.
describe('alock: queue-lock recovery with a local cohort', () => {
  it('seeds 508 and 602 (node kill, co-located clients) are safe and live after healing', async () => {
    for (const seed of [508, 602]) {
      const r = await runSwarmSeed(alock, seed);
      expect(r.description).toMatch(/colocated=[1-9]/);
      expect(r.description).toMatch(/kill=compute/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });
});
