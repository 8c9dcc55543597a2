/**
 * Late holders on `sim`: compute node 2 is paused past 3·T_lease a few times per run while its
 * clients hold, wait for and release ShiftLock locks; waiters on node 1 detect the stall and reset
 * the lock (one-sided recovery, so no memory-node service is needed). A grant dates from its
 * evidence (the verb that showed it, the Handover's arrival); one found stale after a pause is
 * checked before it is used, and every writer release is compare-fenced, so a holder that outran
 * its lease reports LeaseExpiredError and never corrupts the reset lock. The history is judged as
 * the live tests judge it: holds released with LeaseExpiredError protect nothing.
 *
 * Posted verbs leave the node during the pause (sendLagNs 0), as a hardware RNIC sends a posted
 * work request whatever the process does. A reader's release is the paper's single FAA, which
 * cannot be fenced: held in a stopped process until after a reset it skews the new era's counts.
 * That needs a stall of 2·T_lease between the release decision and the FAA; see the README.
 */
import { describe, expect, it } from 'vitest';
import { SHIFTLOCK_PAUSE_SHAPE, pauseCase, runPauseCase } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { shiftlock } from '../src/index.js';

const SEEDS = 150;
const sweepCase = (seed: number, options: ProtocolOptions = {}) => ({ ...pauseCase(seed, { recovery: 'one-sided', ...options }, SHIFTLOCK_PAUSE_SHAPE), sendLagNs: 0 });

describe('shiftlock: a node paused past 3·T_lease, then resumed', () => {
  it(`${SEEDS} seeds: no overlap, no corrupted entry, holds that lost the lock are told so`, async () => {
    const findings: string[] = [];
    let spanning = 0;
    let fenced = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const found = await runPauseCase(shiftlock, sweepCase(seed));
      if (found.problems.length > 0) findings.push(`seed ${seed}: ${found.problems.join('; ')}`);
      spanning += found.spanning;
      fenced += found.fenced;
    }
    expect(findings).toEqual([]);
    // The sweep did pause holders across their leases and resets happened under them.
    expect(spanning).toBeGreaterThan(SEEDS);
    expect(fenced).toBeGreaterThan(SEEDS / 2);
  }, 240_000);

  it('mutantStaleGrants (leases from when a grant is handled, stale grants taken) overlaps holders', async () => {
    let caught = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const found = await runPauseCase(shiftlock, sweepCase(seed, { mutantStaleGrants: true }));
      if (found.problems.some((p) => p.startsWith('exclusion'))) caught++;
    }
    expect(caught).toBeGreaterThan(0);
  }, 120_000);
});
