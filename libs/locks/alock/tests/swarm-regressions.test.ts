import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import { DEFAULT_RELEASE_LINK_TIMEOUT_NS, alock } from '../src/index.js';

// Swarm seeds 508 and 602 (a compute node killed, clients co-located with the memory node): the
// coordinator's queue-lock recovery gated, drained and aborted only the compute nodes, then reset
// the lock table under the local cohort's holder on the memory node, and two local clients held
// one lock. Memory nodes now take part in the recovery like compute nodes.
// The seeds were found before ALock's profile drew options: the defaults of then, passed as the
// caller's options (they win over the drawn ones), replay the same runs (same history digests).
// Since the swarm places some coordinator crashes over the kill, seed 508's coordinator is down
// when its node dies: its recovery now runs from the restarted coordinator (new digest). Since a
// crash may come before the first view, it crashes at the start and its restart declares the node
// dead as an expected member (new digest again). Both digests moved once more when gated acquires
// began to sleep until the gate opens instead of polling it (508: b4073dda8f286e1e → e0b8f1b4d045feff).
const OPTIONS_WHEN_FOUND = { localBudget: 5, remoteBudget: 5, spinNs: 200, remoteSpinNs: 1_000, petersonRead: 'separate', sameNodeStores: false, releaseLinkTimeoutNs: DEFAULT_RELEASE_LINK_TIMEOUT_NS };

describe('alock: queue-lock recovery with a local cohort', () => {
  it('seeds 508 and 602 (node kill, co-located clients) are safe and live after healing', async () => {
    for (const [seed, digest] of [[508, 'e0b8f1b4d045feff'], [602, '0a4228b3e8192ddf']] as const) {
      const r = await runSwarmSeed(alock, seed, OPTIONS_WHEN_FOUND);
      expect(r.description).toMatch(/colocated=[1-9]/);
      expect(r.description).toMatch(/kill=compute/);
      expect(r.failure, `seed ${seed}: ${r.failure?.detail}`).toBeUndefined();
      expect(r.digest).toBe(digest);
    }
  });
});
