import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { mcs } from '../src/index.js';

// Swarm seeds 61 and 98 restart the memory node while a paused compute node's clients hold or
// wait in a queue formed on the old table. Unpaused, a holder wrote its grant into its successor's
// queue node (compute-node memory, which the incarnation fence does not cover) while a client of
// the new, empty table already held the lock. The rule: a handover never crosses a table
// incarnation (the release of a hold on the lost table ends TABLE_LOST, a waiter refuses a grant
// on a lost queue); the mutant drops it.
describe('mcs: memory-node restarts in the swarm', () => {
  it.each([61, 98])('seed %i: safe and live with the rule, exclusion broken by the mutant', async (seed) => {
    const fixed = await runSwarmSeed(mcs, seed);
    expect(fixed.description).toMatch(/memory=restart@/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(mcs, seed, { mutantHandoverAcrossRestart: true });
    expect(mutant.failure?.kind).toBe('safety');
    expect(mutant.failure?.detail).toMatch(/exclusion: \d+ violation/);
  });
});
