import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { drtm } from '../src/index.js';

// Swarm seed 95 with lost completions (`--force-faults flushed-verbs`), the one seed of 1-200 the
// mutant fails: a writer's CAS ran but failed `unreachable`, and the write lock, which has no
// lease, was held by nobody for good.
const SEED = 95;
const FORCE = { force: ['flushed-verbs'] as const };

describe('drtm: a write-lock CAS whose answer was lost (flushed-verbs)', () => {
  it(`seed ${SEED}: the writer reads the word back and frees its own write lock`, async () => {
    const r = await runSwarmSeed(drtm, SEED, {}, FORCE);
    expect(r.description).toMatch(/flush=/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it(`mutant without the read-back: seed ${SEED} fails on liveness`, async () => {
    const r = await runSwarmSeed(drtm, SEED, { mutantNoReadBack: true }, FORCE);
    expect(r.failure?.kind).toBe('liveness');
  });
});
