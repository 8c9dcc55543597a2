import { describe, expect, it } from 'vitest';
import { declock } from '../src/index.js';
import { killSweepRun, deadHolderScenario, deadResetterScenario, deadWaiterBeforeWriteScenario, liveHolderDuringResetScenario } from '@lockfabric/harness';
import { NS_PER_MS as MS } from '@lockfabric/ports';

describe('declock: a compute node is killed; its locks come back after the coordinator notice', () => {
  it('dead holder: the survivor reset finishes at the notice (past the dead member) and the survivor gets the lock', async () => {
    const run = await deadHolderScenario(declock);
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeGreaterThanOrEqual(run.noticeAfterKillNs);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeLessThanOrEqual(run.noticeAfterKillNs + 0.5 * MS);
  });

  it('without the node service (no failure notices: the old behaviour) the reset never finishes', async () => {
    const run = await deadHolderScenario(declock, {}, { services: false });
    expect(run.survivorGrantAfterKillNs, run.summary).toBeUndefined();
    expect(run.steps).toEqual(['survivor: LockTimeoutError']);
  });

  it('dead waiter between its FAA and its entry WRITE: the releaser stops refetching after the waiter timeout, and the next local client is not held behind it', async () => {
    const run = await deadWaiterBeforeWriteScenario(declock);
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeLessThanOrEqual(run.noticeAfterKillNs + 0.5 * MS);
  });

  it('…with the refetch bounded only by maxRefetch (the old behaviour), the node stays stuck well past the notice', async () => {
    const run = await deadWaiterBeforeWriteScenario(declock, { refetchTimeoutNs: 'inf' });
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs ?? Infinity, run.summary).toBeGreaterThan(run.noticeAfterKillNs + 5 * MS);
  });

  it('dead resetter: after the notice a survivor takes the reset over and gets the lock', async () => {
    const run = await deadResetterScenario(declock);
    expect(run.steps[0]).toBe('victim died after claiming the reset');
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeLessThanOrEqual(run.noticeAfterKillNs + 0.5 * MS);
  });

  it('a live holder on a third node keeps the lock until it releases: the reset waits for its node to acknowledge', async () => {
    const run = await liveHolderDuringResetScenario(declock);
    expect(run.verdictOk, run.summary).toBe(true);
    expect(run.survivorGrantAfterKillNs, run.summary).toBeDefined();
  });

  it('mutantIgnoreResetAcks (finish at the notice without the live nodes’ acks) grants the lock beside the live holder', async () => {
    const run = await liveHolderDuringResetScenario(declock, { mutantIgnoreResetAcks: true });
    expect(run.exclusionOk, run.summary).toBe(false);
  });
});

describe('declock: random kills under a contended workload (sim, three compute nodes)', () => {
  const TIMEOUT_MS = 1;
  const STAGGER_MS = 0.1;
  // A survivor that wants the lock after the notice waits out its timeout (+ stagger of its node), then resets at once.
  const BOUND_AFTER_NOTICE_MS = TIMEOUT_MS + 2 * STAGGER_MS + 0.5;

  it('seeds 1–16: exclusion and liveness hold; every lock the dead node held or queued for comes back within the bound after the notice', async () => {
    let recovered = 0;
    for (let seed = 1; seed <= 16; seed++) {
      const run = await killSweepRun(declock, seed, { acquireTimeoutNs: TIMEOUT_MS * MS, acquireTimeoutStaggerNs: STAGGER_MS * MS, policy: seed % 2 ? 'tf' : 'pf' }, { detectionMs: 2 });
      expect(run.swarm.failure, run.why).toBeUndefined();
      expect(run.neverFreed, run.why).toEqual([]);
      expect(run.survivorAcquireErrors, run.why).toEqual({});
      for (const ms of run.recoveryAfterNoticeMs.values()) expect(ms, run.why).toBeLessThanOrEqual(BOUND_AFTER_NOTICE_MS);
      recovered += run.recoveryAfterNoticeMs.size;
    }
    // Not vacuous: the kills left locks behind that survivors then recovered.
    expect(recovered).toBeGreaterThan(5);
  }, 120_000);
});
