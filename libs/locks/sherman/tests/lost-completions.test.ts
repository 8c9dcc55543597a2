import { runSwarmSeed } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { sherman } from '../src/index.js';

// Swarm seeds with lost completions (`--force-faults flushed-verbs`): a CAS on the global word that
// ran but failed `unreachable` left it with a tag nobody believed was theirs, and no lease frees it.
const FORCE = { force: ['flushed-verbs'] as const };
const CASES: { name: string; seed: number; options: ProtocolOptions }[] = [
  { name: 'Sherman (hierarchy), seed 25: the node reads the word back', seed: 25, options: {} },
  { name: 'Sherman-NH, seed 13: the client reads its word back', seed: 13, options: { hierarchy: false } },
];

describe('sherman: a CAS or release whose answer was lost (flushed-verbs)', () => {
  for (const { name, seed, options } of CASES) {
    it(`${name} and every lock is acquirable after healing`, async () => {
      const r = await runSwarmSeed(sherman, seed, options, FORCE);
      expect(r.description).toMatch(/flush=/);
      expect(r.failure, r.failure?.detail).toBeUndefined();
    });

    it(`${name}: the mutant without the read-back fails on liveness`, async () => {
      const r = await runSwarmSeed(sherman, seed, { ...options, mutantNoReadBack: true }, FORCE);
      expect(r.failure?.kind).toBe('liveness');
    });
  }
});
