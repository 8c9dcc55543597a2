import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { caslock } from '../src/index.js';

// Swarm seed 25 with lost completions (`--force-faults flushed-verbs`): a queue pair breaks with
// CASes in flight, and an acquire CAS that ran fails `unreachable`. Before the read-back the word
// kept that client's tag while the client held nothing, and no one could take the lock again.
const SEED = 25;
const FORCE = { force: ['flushed-verbs'] as const };

describe('caslock: a CAS whose answer was lost (flushed-verbs)', () => {
  it(`seed ${SEED}: the client reads its word back and gives up the hold it did not know it had`, async () => {
    const r = await runSwarmSeed(caslock, SEED, {}, FORCE);
    expect(r.description).toMatch(/flush=/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it(`mutant without the read-back: seed ${SEED} leaves a lock held by nobody (liveness)`, async () => {
    const r = await runSwarmSeed(caslock, SEED, { mutantNoReadBack: true }, FORCE);
    expect(r.failure?.kind).toBe('liveness');
  });
});
