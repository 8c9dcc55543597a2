import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { ncosed } from '../src/index.js';

// Swarm seed 10 with lost completions (`--force-faults flushed-verbs`), exclusive acquires only:
// the CAS that put a client into the tail ran but failed `unreachable`, and the client, not knowing
// it was queued, never asked its predecessor nor passed the lock on. N-CoSED does not claim the
// fault: a reader's lost FAA is anonymous and cannot be read back (decision 0005).
const SEED = 10;
const FORCE = { force: ['flushed-verbs'] as const };

describe('ncosed: an exclusive CAS into the tail whose answer was lost (flushed-verbs)', () => {
  it(`seed ${SEED}: the client reads the tail back, finds itself, and goes on queued`, async () => {
    const r = await runSwarmSeed(ncosed, SEED, {}, FORCE);
    expect(r.description).toMatch(/read=0 .*flush=/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it(`mutant without the read-back: seed ${SEED} fails on liveness`, async () => {
    const r = await runSwarmSeed(ncosed, SEED, { mutantNoReadBack: true }, FORCE);
    expect(r.failure?.kind).toBe('liveness');
  });
});
