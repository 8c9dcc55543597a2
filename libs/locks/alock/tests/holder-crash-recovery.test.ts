import { describe, expect, it } from 'vitest';
import { alock } from '../src/index.js';
import { queueHandedWaiterAbortScenario, queueHolderDiesScenario as holderDiesScenario } from '@lockfabric/harness';

const OPTIONS = { spinNs: 1_000, remoteSpinNs: 1_000 };

describe('alock: coordinator-driven recovery after a holder dies (quiesce, drain, abort, reset)', () => {
  it('waits for the survivor holders, aborts the waiter stuck behind the dead holder, resets the cohort words, and the lock is granted again; the checker passes', async () => {
    const r = await holderDiesScenario(alock, OPTIONS);
    expect(r.run.reason).not.toBe('max-events');
    expect(r.done).toBe(true);
    expect(r.recovery?.reset).toBe(true);
    expect(r.recovery?.aborted).toBe(1);
    expect(r.recovery?.drainRounds).toBeGreaterThan(1);
    expect(r.recovery?.steps.map((s) => s.stage)).toEqual(['gate', 'drain', 'reset', 'resume']);
    expect(r.steps).toEqual(['E had M', "A's wait: LockAbortedError", 'F got M', 'A got L']);
    expect(r.verdict.violations).toEqual([]);
    expect(r.verdict.liveness.ok).toBe(true);
  });

  it('mutant: resetting and resuming without the drain admits F beside the holder C, and the checker catches it', async () => {
    const r = await holderDiesScenario(alock, OPTIONS, true);
    expect(r.verdict.violations.map((v) => v.lock)).toContain(1);
  });
});

describe('alock: a waiter aborted after it was handed the lock, then reusing its descriptor', () => {
  const SLOW_POLL = { spinNs: 100_000, remoteSpinNs: 1_000 };

  it('waits for the holder after the recovery: the abort left a hand-over in the descriptor, and the reuse clears it', async () => {
    const r = await queueHandedWaiterAbortScenario(alock, SLOW_POLL);
    expect(r.done).toBe(true);
    expect(r.recovery?.reset).toBe(true);
    expect(r.steps).toEqual(["W's first wait: LockAbortedError", 'X releases M', 'W got M']);
    expect(r.verdict.violations).toEqual([]);
  });

  it('mutant: reusing it without clearing lets W in beside X, and the checker catches it', async () => {
    const r = await queueHandedWaiterAbortScenario(alock, { ...SLOW_POLL, mutantSkipAbortClear: true });
    expect(r.steps.slice(0, 2)).toEqual(["W's first wait: LockAbortedError", 'W got M']);
    expect(r.verdict.violations.map((v) => v.lock)).toContain(1);
  });
});
