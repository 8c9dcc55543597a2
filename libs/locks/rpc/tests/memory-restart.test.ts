import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { rpc } from '../src/index.js';

// The memory node's lock manager restarts with it, empty (srvlock README, "Memory-node restarts").
// Seed 31: compute node 1 is killed and declared dead while the memory node is down; its acquires
// were waiting in the memory node's inbox, and a restarted server that forgot the death granted
// them to clients that never release (every lock stuck). Seed 151: a cut held up a grant of the
// lost table until after the restart, while the new table granted the lock to another client.
describe('rpc: memory-node restarts in the swarm', () => {
  it('seed 31: the restarted server fences the nodes declared dead before it; the mutant leaves every lock stuck', async () => {
    const fixed = await runSwarmSeed(rpc, 31);
    expect(fixed.description).toMatch(/kill=compute1@.* memory=restart@/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(rpc, 31, { mutantForgetDeadOnStart: true });
    expect(mutant.failure?.kind).toBe('liveness');
    expect(mutant.failure?.detail).toMatch(/after healing, locks 0, 1, 2, 3 not acquirable/);
  });

  it('seed 151: a grant of the lost table that arrives after the restart is refused; the mutant takes it and breaks exclusion', async () => {
    const fixed = await runSwarmSeed(rpc, 151);
    expect(fixed.description).toMatch(/cuts=.* memory=restart@/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(rpc, 151, { mutantIgnoreServerRestart: true });
    expect(mutant.failure?.kind).toBe('safety');
    expect(mutant.failure?.detail).toMatch(/exclusion: \d+ violation/);
  });
});
