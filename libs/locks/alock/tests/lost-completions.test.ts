import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';

// Swarm seed 85 with lost completions (`--force-faults flushed-verbs`): a release's CAS of the
// cohort tail back to null failed `unreachable` without running, and the descriptor stayed the
// tail of a cohort nobody held. ALock does not claim the fault: a lost hand-over store or a lost
// store inside the Peterson entry still strands the cohort (decision 0005).
const SEED = 85;
const FORCE = { force: ['flushed-verbs'] as const };

describe('alock: a release CAS whose answer was lost (flushed-verbs)', () => {
  it(`seed ${SEED}: the releaser reads the cohort tail back and sends the CAS again`, async () => {
    const r = await runSwarmSeed(alock, SEED, {}, FORCE);
    expect(r.description).toMatch(/flush=/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it(`mutant without the read-back: seed ${SEED} fails on liveness`, async () => {
    const r = await runSwarmSeed(alock, SEED, { mutantNoReadBack: true }, FORCE);
    expect(r.failure?.kind).toBe('liveness');
  });

  // Seed 98 reaches the reuse of a descriptor whose enqueue CAS was lost (98 and 196 of 1-300 are
  // the seeds where only the mutant fails; no seed shows it as an exclusion failure: lost-swap.test).
  it('seed 98: a descriptor whose enqueue CAS was lost is reused under a new generation; the mutant fails on liveness', async () => {
    expect((await runSwarmSeed(alock, 98, {}, FORCE)).failure).toBeUndefined();
    const r = await runSwarmSeed(alock, 98, { mutantReuseAfterFailedSwap: true }, FORCE);
    expect(r.failure?.kind).toBe('liveness');
  });
});
