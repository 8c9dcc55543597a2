import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { mcs } from '../src/index.js';

// Swarm seed 247 with lost completions (`--force-faults flushed-verbs`): a release's CAS of the
// tail back to free failed `unreachable` without running, and the releaser's queue node stayed the
// tail of a lock nobody held. MCS does not claim the fault yet: a lost grant WRITE (seeds 13, 89)
// still strands the successor (decision 0005).
const SEED = 247;
const FORCE = { force: ['flushed-verbs'] as const };

describe('mcs: a release CAS whose answer was lost (flushed-verbs)', () => {
  it(`seed ${SEED}: the releaser reads the tail back and sends the CAS again`, async () => {
    const r = await runSwarmSeed(mcs, SEED, {}, FORCE);
    expect(r.description).toMatch(/flush=/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it(`mutant without the read-back: seed ${SEED} fails on liveness`, async () => {
    const r = await runSwarmSeed(mcs, SEED, { mutantNoReadBack: true }, FORCE);
    expect(r.failure?.kind).toBe('liveness');
  });
});
