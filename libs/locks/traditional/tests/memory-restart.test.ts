import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { traditional } from '../src/index.js';

// Seed 127: compute node 2 is killed and declared dead while the memory node is down. Its queued
// acquires were still in the memory node's inbox; a restarted manager that forgot the death granted
// them to clients that never release (srvlock README, "Memory-node restarts").
describe('traditional: memory-node restarts in the swarm', () => {
  it('seed 127: the restarted manager fences the nodes declared dead before it; the mutant leaves locks stuck', async () => {
    const fixed = await runSwarmSeed(traditional, 127);
    expect(fixed.description).toMatch(/kill=compute2@.* memory=restart@/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(traditional, 127, { mutantForgetDeadOnStart: true });
    expect(mutant.failure?.kind).toBe('liveness');
    expect(mutant.failure?.detail).toMatch(/after healing, locks .* not acquirable/);
  });
});
