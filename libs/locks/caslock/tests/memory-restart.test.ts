import { runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { caslock } from '../src/index.js';

// Swarm seed 782 (issue 13): client 3/5 spun on lock 0's word; one of its CASes won on the old
// table just before the memory node crashed (15 µs), and a cut of node 3 held the completion until
// 991 µs, after the restart (951 µs). Granted by it, 3/5 held lock 0 beside 1/6, which had taken
// it on the new table. An atomic that completes after its table was lost grants nothing.
const SEED = 782;

describe('caslock: memory-node restarts', () => {
  it(`swarm seed ${SEED}: no grant from a CAS that completes after the restart`, async () => {
    const r = await runSwarmSeed(caslock, SEED);
    expect(r.description).toMatch(/cuts=.* memory=restart@/);
    expect(r.failure, r.failure?.detail).toBeUndefined();
  });

  it(`mutant that grants from a lost table: seed ${SEED} breaks exclusion`, async () => {
    const r = await runSwarmSeed(caslock, SEED, { mutantGrantFromLostTable: true });
    expect(r.failure?.kind).toBe('safety');
    expect(r.failure?.detail).toMatch(/lock 0: .* overlaps /);
  });
});
