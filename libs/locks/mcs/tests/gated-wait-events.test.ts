import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { mcs } from '../src/index.js';

// Swarm seed 11 kills a compute node; the coordinator's queue-lock recovery then keeps every
// survivor's new acquires behind its gate for about a detection timeout. Polled every 200 ns, that
// gate cost 950 000 simulated events in this one seed; a gated acquire now sleeps until the gate
// opens (at the poll that would have seen it), so the seed runs a few thousand. Counted, not timed.
describe('mcs: an acquire held back by a recovery gate', () => {
  it('sleeps until the gate opens instead of polling it (seed 11: events counted)', async () => {
    const fixed = await runSwarmSeed(mcs, 11);
    expect(fixed.description).toMatch(/kill=compute/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    expect(fixed.simEvents).toBeLessThan(20_000);
    const polling = await runSwarmSeed(mcs, 11, { mutantPollGate: true });
    expect(polling.failure, polling.failure?.detail).toBeUndefined();
    expect(polling.simEvents).toBeGreaterThan(500_000);
  });
});
