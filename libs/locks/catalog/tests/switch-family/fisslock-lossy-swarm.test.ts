import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import { fisslock } from '@lockfabric/lock-fisslock';

// FissLock's swarm profile with switch loss and duplication on (`lossy`; the profile itself still
// runs `delay`: libs/locks/fisslock/README.md "Failures and anomalies").
const lossy = { ...fisslock, swarm: { ...fisslock.swarm, switchFaults: 'lossy' as const } };

// Swarm seeds 113 and 292 under `lossy` (egress loss 6–8 %): a ② copy circled behind its own
// request's abort at a machine with no agent; the abort reached the agent first and was dropped
// (nothing recorded), then the copy made a holder nobody releases and the lock never freed. The
// agent now remembers aborts it dropped and releases such a late holder at once
// (libs/locks/fisslock/src/pool/given-up.ts); `mutantHoldGivenUp` keeps the old behaviour.
describe('fisslock swarm under switch loss: late ② copies of given-up requests', () => {
  it('seeds 113 and 292 are safe and every lock is acquirable after healing', async () => {
    for (const seed of [113, 292]) {
      const r = await runSwarmSeed(lossy, seed);
      expect(r.description).toMatch(/switch=egress\(loss=0\.0[67]/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
    }
  });

  it('mutantHoldGivenUp leaves a lock nobody can take in both seeds', async () => {
    for (const seed of [113, 292]) {
      const r = await runSwarmSeed(lossy, seed, { mutantHoldGivenUp: true });
      expect(r.failure?.kind, `seed ${seed}`).toBe('liveness');
      expect(r.failure?.detail).toMatch(/not acquirable/);
    }
  });
});
