import { describe, expect, it } from 'vitest';
import { dslr } from '../src/index.js';
import { ResetCounter, checkSeed, swarmCase } from '@lockfabric/harness';

const SEEDS = 500;

describe('dslr: simulation sweep', () => {
  it(`${SEEDS} seeds of swarm runs: no violation, typed failures only, FCFS and zero CAS when fault-free`, async () => {
    const resets = new ResetCounter();
    const findings: string[] = [];
    let crashRuns = 0;
    let smallLimitRuns = 0;
    let faultFreeRuns = 0;
    let aborts = 0;
    let acquires = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const swarm = swarmCase(seed);
      const found = await checkSeed(dslr, swarm, resets);
      if (found.problems.length > 0) findings.push(`seed ${seed} ${JSON.stringify(swarm.options)}: ${found.problems.join('; ')}`);
      if (swarm.crashProbability > 0) crashRuns++;
      if (swarm.smallLimit) smallLimitRuns++;
      if (swarm.faultFree) faultFreeRuns++;
      aborts += found.aborts;
      acquires += found.acquires;
    }
    expect(findings).toEqual([]);
    // The sweep reached every repair path, not just the happy one.
    expect(Math.min(crashRuns, smallLimitRuns, faultFreeRuns)).toBeGreaterThan(100);
    expect(aborts).toBeGreaterThan(0);
    expect(acquires).toBeGreaterThan(SEEDS * 80);
    for (const cause of ['skip', 'resetter-zero', 'frozen-watchdog-zero']) expect(resets.causes[cause] ?? 0, cause).toBeGreaterThan(0);
  }, 240_000);
});
