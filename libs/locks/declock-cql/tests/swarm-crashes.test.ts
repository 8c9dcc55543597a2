import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { declockCql } from '../src/index.js';

// Swarm seed 99 crashes a client that holds on a live node. The profile's 2 ms suspicion lets a
// timed-out waiter's reset go past it; with the protocol's default (never suspect) the locks it
// held stay unacquirable after healing — the reason crashes were out of the profile before.
describe('declock-cql: client crashes in the swarm', () => {
  it('seed 99 recovers with the profile suspicion and stays stuck without one', async () => {
    const recovered = await runSwarmSeed(declockCql, 99);
    expect(recovered.description).toMatch(/crash=0\.0[1-9]/);
    expect(recovered.failure, recovered.failure?.detail).toBeUndefined();
    const neverSuspected = await runSwarmSeed(declockCql, 99, { suspectAfterNs: 1e15 });
    expect(neverSuspected.failure?.kind).toBe('liveness');
    expect(neverSuspected.failure?.detail).toMatch(/after healing, locks .* not acquirable/);
  });
});
