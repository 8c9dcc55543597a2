import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '../../src/index.js';
import { srvlock } from '@lockfabric/lock-srvlock';
import { parlock } from '@lockfabric/lock-parlock';

// Swarm seeds that reached the phantom holder of a failover before the fix: a client's release,
// acknowledged by the home that then died, reached its own node's service only after that node had
// answered the new home's reclaim (the process was paused between the two), so the new home kept
// the hold for ever. The survivor now forwards such a release to the new home. (Seed 236 reached it
// for both until the swarm placed its coordinator crash over the kill; parlock's seed is now 1128,
// and no srvlock seed up to 3000 reaches it with the new draws: srvlock keeps 236 as a plain seed.)
describe('failover: a release noted after the reclaim reaches the new home', () => {
  it('parlock seed 1128 and srvlock seed 236 are safe and live after healing', async () => {
    for (const [protocol, seed] of [[parlock, 1128], [srvlock, 236]] as const) {
      const r = await runSwarmSeed(protocol, seed);
      expect(r.description).toMatch(/pauses=n\d@/);
      expect(r.description).toMatch(/kill=compute/);
      expect(r.failure, `${protocol.id} seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });

  it('mutant: without the forward, parlock seed 1128 leaves a lock unacquirable after healing', async () => {
    const r = await runSwarmSeed(parlock, 1128, { mutantNoReclaimForward: true });
    expect(r.failure?.kind).toBe('liveness');
    expect(r.failure?.detail).toMatch(/after healing, locks .* not acquirable/);
  });
});
