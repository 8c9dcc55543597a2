import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';

// Swarm seed 906 with a counter limit of 16: a waiter's node was paused for about a millisecond,
// long enough for its turn to come, be skipped, and the word to be reset and regrow through
// several generations; back, it read counters that looked like its own generation's and entered
// beside a writer. A waiter blind for longer than the shortest skip now gives its ticket up.
// The seed was found before memory-node restarts joined DSLR's swarm mix; without them it draws
// the same schedule as then.
const dslrAsFound = { ...dslr, swarm: { ...dslr.swarm!, memoryRestart: false } };

describe('dslr: a waiter blind through a pause', () => {
  it('seed 906 (counterLimit=16, pauses past the lease) is safe', async () => {
    const r = await runSwarmSeed(dslrAsFound, 906, { counterLimit: 16 });
    expect(r.description).toMatch(/pauses=n\d@/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it('mutant: taking the first sighting after the pause at face value overlaps a reader and a writer', async () => {
    const r = await runSwarmSeed(dslrAsFound, 906, { counterLimit: 16, mutantNoBlindCheck: true });
    expect(r.failure?.kind).toBe('safety');
    expect(r.failure?.detail).toMatch(/shared .* overlaps .* exclusive/);
  });
});
