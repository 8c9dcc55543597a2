import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { declock } from '../src/index.js';

// Client crashes under each of DecLock's local policies (Fig. 14), one swarm seed each that was
// stuck before: a client that crashes instead of releasing keeps its node's local lock, so its
// node's other clients waited behind it for ever, and with no remote waiter nothing reset the
// node's CQL hold. A local waiter now resets that hold after an acquire timeout (the 2 ms
// suspicion the swarm draws declares the silent member failed) and starts again on a new local
// lock; the mutant waits for ever.
const seeds = [
  [2, 'handoff=timestamp,policy=tf'],
  [22, 'handoff=timestamp,policy=pf'],
  [4, 'handoff=remote-prefer'],
  [17, 'handoff=local-prefer'],
  [9, 'handoff=local-bound,localBound=1'],
] as const;

describe('declock: client crashes in the swarm', () => {
  it.each(seeds)('seed %i (%s): live with local recovery, stuck without it', async (seed, policy) => {
    const fixed = await runSwarmSeed(declock, seed);
    expect(fixed.description).toContain(policy);
    expect(fixed.description).not.toContain('crash=0.0000');
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(declock, seed, { mutantNoLocalRecovery: true });
    expect(mutant.failure?.kind).toBe('liveness');
  });
});
