import { describe, expect, it } from 'vitest';
import { declockCql } from '../src/index.js';
import { killSweepRun, deadHolderScenario, deadResetterScenario, liveHolderDuringResetScenario } from '@lockfabric/harness';
import { NS_PER_MS as MS } from '@lockfabric/ports';

describe('declock-cql: a compute node is killed; its locks come back after the coordinator notice', () => {
  it('dead holder: the survivor reset finishes at the notice and the survivor gets the lock', async () => {
    const run = await deadHolderScenario(declockCql);
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeGreaterThanOrEqual(run.noticeAfterKillNs);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeLessThanOrEqual(run.noticeAfterKillNs + 0.5 * MS);
  });

  it('without the node service (no failure notices: the old behaviour) the reset never finishes', async () => {
    const run = await deadHolderScenario(declockCql, {}, { services: false });
    expect(run.survivorGrantAfterKillNs, run.summary).toBeUndefined();
  });

  it('dead resetter: after the notice a survivor takes the reset over and gets the lock', async () => {
    const run = await deadResetterScenario(declockCql);
    expect(run.steps[0]).toBe('victim died after claiming the reset');
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeLessThanOrEqual(run.noticeAfterKillNs + 0.5 * MS);
  });

  it('a live holder on a third node keeps the lock until it releases; mutantIgnoreResetAcks grants it beside the holder', async () => {
    const run = await liveHolderDuringResetScenario(declockCql);
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeDefined();
    const mutant = await liveHolderDuringResetScenario(declockCql, { mutantIgnoreResetAcks: true });
    expect(mutant.exclusionOk, mutant.summary).toBe(false);
  });

  it('random kills under a contended workload, seeds 1–12: exclusion and liveness hold; every lock comes back within the bound after the notice', async () => {
    const TIMEOUT_MS = 1;
    const STAGGER_MS = 0.1;
    let recovered = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const run = await killSweepRun(declockCql, seed, { acquireTimeoutNs: TIMEOUT_MS * MS, acquireTimeoutStaggerNs: STAGGER_MS * MS }, { detectionMs: 2 });
      expect(run.swarm.failure, run.why).toBeUndefined();
      expect(run.neverFreed, run.why).toEqual([]);
      expect(run.survivorAcquireErrors, run.why).toEqual({});
      for (const ms of run.recoveryAfterNoticeMs.values()) expect(ms, run.why).toBeLessThanOrEqual(TIMEOUT_MS + 2 * STAGGER_MS + 0.5);
      recovered += run.recoveryAfterNoticeMs.size;
    }
    // Not vacuous: the kills left locks behind that survivors then recovered.
    expect(recovered).toBeGreaterThan(5);
  }, 120_000);
});
