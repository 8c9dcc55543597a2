import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';

// Swarm seeds 80 and 119 with a counter limit of 8: a node that died held the ticket that froze a
// word (its designated resetter), so after healing the probe's acquires bounce off the frozen word.
// A bouncer zeroes such a word once it has watched it stand still for a stall threshold (2λ)
// without a gap; the probe's backoff (Appendix A.3) grew past 2λ, every bounce restarted its
// watch, and the lock was never granted again. The wait after a bounce is now at most λ.
describe('dslr: a frozen word whose resetter died', () => {
  it.each([80, 119])('seed %i (counterLimit=8, a node kill): every lock acquirable after healing; the unclamped backoff leaves it frozen', async (seed) => {
    const fixed = await runSwarmSeed(dslr, seed, { counterLimit: 8 });
    expect(fixed.description).toMatch(/kill=compute/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(dslr, seed, { counterLimit: 8, mutantUnclampedBounceBackoff: true });
    expect(mutant.failure?.kind).toBe('liveness');
    expect(mutant.failure?.detail).toMatch(/after healing, locks .* not acquirable/);
  });
});
