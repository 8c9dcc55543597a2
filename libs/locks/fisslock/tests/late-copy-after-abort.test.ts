import { describe, expect, it } from 'vitest';
import { runWide } from './support/wide-run.js';
import { expectSound } from './support/wide-sweep.js';
import { FAULTS_10 } from './support/workload.js';

// A ② copy circled behind its own request's abort at a machine with no agent; the abort reached the
// agent first and was dropped (nothing recorded), then the copy made a holder nobody releases and
// the lock never freed. The agent now remembers aborts it dropped and releases such a late holder
// at once (src/pool/given-up.ts; the old rule is a mutant of src/pool/agent-state.test.ts). The same mechanism
// under the swarm's `lossy` profile (seeds 113 and 292):
// libs/locks/catalog/tests/switch-family/fisslock-lossy-swarm.test.ts (it needs the harness).
//
// In the package's own wide sweep (10 % egress faults, seed 49): a remote ②
// holder nobody holds. Without any repair the lock used to end stuck; now every lock ends free and
// the late copy is released (`lateCopiesReleased`).
describe('fisslock wide sweep seed 49 at 10 % faults, no repair wired', () => {
  it('ends with every lock free, the late copy released', async () => {
    const fixed = await runWide(49, { faults: FAULTS_10, watchdog: { off: true } });
    expectSound('seed 49', fixed);
    expect(fixed.endState.checked).toBe(true);
    expect(fixed.endState.stuck).toEqual([]);
    expect(fixed.counters['lateCopiesReleased']).toBeGreaterThan(0);
  });
});
