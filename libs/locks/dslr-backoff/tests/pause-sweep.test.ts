/** The dslr pause sweep for DSLR+: a node paused past the lease must come back harmless. */
import { describe, expect, it } from 'vitest';
import { dslrBackoff } from '../src/index.js';
import { pauseCase, runPauseCase } from '@lockfabric/harness';

const SEEDS = 40;

describe('dslr-backoff: a node paused past the lease, then resumed', () => {
  it(`${SEEDS} seeds: no overlap, holds that spanned a pause fenced; the unfenced FAA release overlaps within the same seeds`, async () => {
    const findings: string[] = [];
    let spanning = 0;
    let fenced = 0;
    let mutantFound: string | undefined;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const found = await runPauseCase(dslrBackoff, pauseCase(seed));
      if (found.problems.length > 0) findings.push(`seed ${seed}: ${found.problems.join('; ')}`);
      spanning += found.spanning;
      fenced += found.fenced;
      if (mutantFound === undefined) {
        const mutant = await runPauseCase(dslrBackoff, pauseCase(seed, { paperLiteralFaaRelease: true }));
        if (mutant.problems.length > 0) mutantFound = mutant.problems.join(' ');
      }
    }
    expect(findings).toEqual([]);
    expect(spanning).toBeGreaterThan(SEEDS / 2);
    expect(fenced).toBe(spanning);
    expect(mutantFound).toMatch(/^exclusion/);
  }, 240_000);
});
