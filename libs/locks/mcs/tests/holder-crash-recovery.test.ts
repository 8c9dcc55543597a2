import { QueueRecoveryGroup } from '@lockfabric/locks-common';
import type { QueueMemberState, QueueRecoveryMember } from '@lockfabric/locks-common';
import { describe, expect, it } from 'vitest';
import { mcs } from '../src/index.js';
import { queueHandedWaiterAbortScenario, queueHolderDiesScenario as holderDiesScenario } from '@lockfabric/harness';

const OPTIONS = { pollIntervalNs: 1_000 };

describe('mcs: coordinator-driven recovery after a holder dies (quiesce, drain, abort, reset)', () => {
  it('waits for the survivor holders, aborts the waiter stuck behind the dead holder, resets, and the lock is granted again; the checker passes', async () => {
    const r = await holderDiesScenario(mcs, OPTIONS);
    expect(r.run.reason).not.toBe('max-events');
    expect(r.done).toBe(true);
    expect(r.recovery?.reset).toBe(true);
    expect(r.recovery?.aborted).toBe(1);
    // The drain took several rounds: the survivor held M (C, then E) for 300 µs after the gate.
    expect(r.recovery?.drainRounds).toBeGreaterThan(1);
    expect(r.recovery?.steps.map((s) => s.stage)).toEqual(['gate', 'drain', 'reset', 'resume']);
    // F, gated during the recovery, got M only after E (the holder the drain waited for) had it.
    expect(r.steps).toEqual(['E had M', "A's wait: LockAbortedError", 'F got M', 'A got L']);
    expect(r.verdict.violations).toEqual([]);
    expect(r.verdict.liveness.ok).toBe(true);
  });

  it('mutant: resetting and resuming without the drain admits F beside the holder C, and the checker catches it', async () => {
    const r = await holderDiesScenario(mcs, OPTIONS, true);
    expect(r.verdict.violations.length).toBeGreaterThan(0);
    expect(r.verdict.violations.map((v) => v.lock)).toContain(1);
  });
});

describe('mcs: a waiter aborted after it was handed the lock, then reusing its queue node', () => {
  it('waits for the holder after the recovery: the grant it never took is cleared when the node is reused', async () => {
    const r = await queueHandedWaiterAbortScenario(mcs, { pollIntervalNs: 100_000 });
    expect(r.done).toBe(true);
    expect(r.steps).toEqual(["W's first wait: LockAbortedError", 'X releases M', 'W got M']);
    expect(r.verdict.violations).toEqual([]);
  });

  it('mutant: with mutantSkipNodeReset the stale grant lets W in beside X, and the checker catches it', async () => {
    const r = await queueHandedWaiterAbortScenario(mcs, { pollIntervalNs: 100_000, mutantSkipNodeReset: true });
    expect(r.verdict.violations.map((v) => v.lock)).toContain(1);
  });
});

function member(state: QueueMemberState, aborts: string[]): QueueRecoveryMember {
  return { recoveryState: () => state, abortWaiters: (reason) => (aborts.push(reason), state.waiting) };
}

describe('the recovery group of one node', () => {
  it('aborts only when the gate is closed and nothing is held or busy on the whole node', () => {
    const aborts: string[] = [];
    const group = new QueueRecoveryGroup();
    group.register(member({ holding: 0, waiting: 2, busy: 0, broken: 0 }, aborts));
    const holder = { holding: 1, waiting: 0, busy: 0, broken: 0 };
    const unregister = group.register(member(holder, aborts));
    expect(group.tryAbort('x')).toEqual({ done: false, holding: 1, busy: 0 });
    group.gate([7]);
    expect(group.isDead(7)).toBe(true);
    expect(group.tryAbort('x')).toEqual({ done: false, holding: 1, busy: 0 });
    expect(aborts).toEqual([]);
    unregister();
    group.register(member({ holding: 0, waiting: 0, busy: 1, broken: 0 }, aborts));
    expect(group.tryAbort('x').done).toBe(false);
    expect(aborts).toEqual([]);
  });
});
