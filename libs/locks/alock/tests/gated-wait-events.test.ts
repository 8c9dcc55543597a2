import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';

// Swarm seed 94 kills a compute node; while the coordinator's queue-lock recovery runs, new
// acquires wait at its gate (or for a free descriptor). They sleep until it opens, at the poll that
// would have seen it, instead of polling every spinNs: 600 simulated events against 1 820 for the
// polling wait (`mutantPollGate`). Counted, not timed; deterministic for the seed.
describe('alock: an acquire held back by a recovery gate', () => {
  it('sleeps until the gate opens instead of polling it (seed 94: events counted)', async () => {
    const fixed = await runSwarmSeed(alock, 94);
    expect(fixed.description).toMatch(/kill=compute/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    expect(fixed.simEvents).toBeLessThan(1_000);
    const polling = await runSwarmSeed(alock, 94, { mutantPollGate: true });
    expect(polling.failure, polling.failure?.detail).toBeUndefined();
    expect(polling.simEvents).toBeGreaterThan(1_500);
  });
});
