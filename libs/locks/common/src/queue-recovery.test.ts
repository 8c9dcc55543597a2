import { describe, expect, it } from 'vitest';
import { runQueueLockRecovery } from './queue-recovery.js';
import type { AbortOutcome, QueueRecoveryParams, QueueRecoveryParticipant } from './queue-recovery.js';

/** A participant that stays busy (holding) for `busyRounds` abort calls, then aborts `waiters`. */
function fake(machine: number, log: string[], busyRounds: number, options: { active?: boolean; failOn?: string; waiters?: number } = {}): QueueRecoveryParticipant {
  let calls = 0;
  const step = (what: string) => {
    log.push(`${what} ${machine}`);
    if (options.failOn === what) throw new Error(`${machine} does not answer`);
  };
  return {
    machine,
    gate: async () => (step('gate'), options.active ?? true),
    tryAbort: async (): Promise<AbortOutcome> => {
      step('abort');
      return calls++ < busyRounds ? { done: false, holding: 1, busy: 0 } : { done: true, aborted: options.waiters ?? 0 };
    },
    resume: async () => step('resume'),
  };
}

function params(participants: QueueRecoveryParticipant[], log: string[], extra: Partial<QueueRecoveryParams> = {}): QueueRecoveryParams {
  let t = 0;
  return {
    epoch: 3n,
    participants,
    deadNodes: [9],
    resetTable: async () => void log.push('reset'),
    nowNs: () => (t += 1_000),
    pause: async () => undefined,
    maxDrainRounds: 10,
    ...extra,
  };
}

describe('runQueueLockRecovery', () => {
  it('gates all, asks only the undrained again, resets once every survivor aborted, then resumes; nodes without queue locks drop out', async () => {
    const log: string[] = [];
    const run = await runQueueLockRecovery(params([fake(1, log, 0, { waiters: 2 }), fake(2, log, 2, { waiters: 1 }), fake(3, log, 0, { active: false })], log));
    expect(log).toEqual(['gate 1', 'gate 2', 'gate 3', 'abort 1', 'abort 2', 'abort 2', 'abort 2', 'reset', 'resume 1', 'resume 2']);
    expect(run).toMatchObject({ reset: true, aborted: 3, drainRounds: 3, machines: [1, 2] });
    expect(run.steps.map((s) => s.stage)).toEqual(['gate', 'drain', 'reset', 'resume']);
  });

  it('never resets while a survivor still holds: after maxDrainRounds the gates open and nothing is reset', async () => {
    const log: string[] = [];
    const run = await runQueueLockRecovery(params([fake(1, log, 0), fake(2, log, 100)], log, { maxDrainRounds: 4 }));
    expect(run.reset).toBe(false);
    expect(log).not.toContain('reset');
    expect(log.slice(-2)).toEqual(['resume 1', 'resume 2']);
  });

  it('never resets after resetWithinNs (a gate lease could have opened a node by itself)', async () => {
    const log: string[] = [];
    const run = await runQueueLockRecovery(params([fake(1, log, 3)], log, { resetWithinNs: 4_000 }));
    expect(run.reset).toBe(false);
    expect(log).not.toContain('reset');
  });

  it('a survivor that does not answer fails the recovery: no reset, the others resume', async () => {
    const log: string[] = [];
    await expect(runQueueLockRecovery(params([fake(1, log, 0), fake(2, log, 0, { failOn: 'abort' })], log))).rejects.toThrow(/does not answer/);
    expect(log).not.toContain('reset');
    expect(log).toContain('resume 1');
    const early: string[] = [];
    await expect(runQueueLockRecovery(params([fake(1, early, 0), fake(2, early, 0, { failOn: 'gate' })], early))).rejects.toThrow(/does not answer/);
    expect(early).toEqual(['gate 1', 'gate 2', 'resume 1']);
  });

  it('mutant: skipping the drain resets while a survivor still holds (what the sim scenarios catch with the checker)', async () => {
    const log: string[] = [];
    const run = await runQueueLockRecovery(params([fake(1, log, 5)], log, { mutantSkipDrain: true }));
    expect(run.reset).toBe(true);
    expect(log).toEqual(['gate 1', 'reset', 'resume 1']);
  });
});
