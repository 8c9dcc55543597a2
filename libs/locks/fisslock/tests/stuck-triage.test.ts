import { SchedulerClock, VirtualScheduler } from '@lockfabric/sim';
import { describe, expect, it } from 'vitest';
import { createStuckTriage } from '../src/recovery/stuck-triage.js';
import type { LockReportAnswer, StuckLockReport, StuckTriageDeps, TriageOutcome } from '../src/recovery/stuck-triage.js';
import type { ServerReport } from '../src/recovery/recovery-state.js';

const MS = 1_000_000;
const LID = 3;

/** Machine 1's agent for lock 3 held by task 4 of machine 2, with a waiter queued (what the watchdog flags). */
const agentHeldBy2 = (): ServerReport => ({
  machine: 1,
  agents: [{ lid: LID, machine: 1, mode: 'exclusive', holders: [{ mid: 2, task: 4 }], wqueue: [{ mid: 1, task: 9, mode: 'exclusive' }], state: 'live' }],
  clients: [{ lid: LID, mid: 1, task: 9, mode: 'exclusive', state: 'pending', startNs: 0 }],
});
/** Machine 2 with its client still holding (a long hold) or with no record of the request (nobody holds it). */
const machine2 = (holding: boolean): ServerReport => ({
  machine: 2,
  agents: [],
  clients: holding ? [{ lid: LID, mid: 2, task: 4, mode: 'exclusive', state: 'granted', startNs: 0 }] : [],
});
const suspicion: StuckLockReport = { machine: 1, lock: LID, reason: 'stalled-queue' };

/** A triage on a virtual clock whose `ask` answers after 1 ms with `answers` (a silent machine never answers). */
function triageWith(answers: () => readonly LockReportAnswer[] | 'silent', extra: Partial<StuckTriageDeps> = {}) {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const repaired: number[] = [];
  const outcomes: TriageOutcome[] = [];
  let asked = 0;
  const triage = createStuckTriage({
    clock,
    confirmDeadlineMs: 5,
    ask: () => {
      asked++;
      const a = answers();
      return a === 'silent' ? new Promise<never>(() => undefined) : clock.sleep(MS).then(() => a);
    },
    repair: (r) => {
      repaired.push(r.lock);
      return clock.sleep(2 * MS);
    },
    onOutcome: (_r, o) => void outcomes.push(o),
    ...extra,
  });
  const settle = async (): Promise<void> => void (await scheduler.run({ untilNs: scheduler.nowNs() + 1_000 * MS }));
  return { triage, repaired, outcomes, settle, asked: () => asked, scheduler };
}

describe('stuck triage: a stalled-queue suspicion is repaired only when every live node confirms it', () => {
  it('stalled (the holder is a request no client holds): repaired', async () => {
    const t = triageWith(() => [
      { machine: 1, report: agentHeldBy2() },
      { machine: 2, report: machine2(false) },
    ]);
    const outcome = t.triage.handle(suspicion);
    await t.settle();
    expect(await outcome).toBe('repair');
    expect(t.repaired).toEqual([LID]);
    expect(t.triage.stats).toMatchObject({ suspicions: 1, repairs: 1, dismissed: 0 });
  });

  it('a long hold (the holder is a live client that holds it): not repaired', async () => {
    const t = triageWith(() => [
      { machine: 1, report: agentHeldBy2() },
      { machine: 2, report: machine2(true) },
    ]);
    const outcome = t.triage.handle(suspicion);
    await t.settle();
    expect(await outcome).toBe('dismissed');
    expect(t.repaired).toEqual([]);
    expect(t.triage.stats).toMatchObject({ suspicions: 1, repairs: 0, dismissed: 1 });
  });

  it('a node that does not answer (an error, or nothing by the deadline): not repaired', async () => {
    const failed = triageWith(() => [
      { machine: 1, report: agentHeldBy2() },
      { machine: 2, missing: 'no answer within 2000 ms' },
    ]);
    const a = failed.triage.handle(suspicion);
    await failed.settle();
    expect(await a).toBe('unanswered');
    const silent = triageWith(() => 'silent');
    const b = silent.triage.handle(suspicion);
    await silent.settle();
    expect(await b).toBe('unanswered');
    expect([failed.repaired, silent.repaired]).toEqual([[], []]);
    // the lock is free for a later suspicion once the deadline passed
    expect(silent.triage.inFlight()).toBe(0);
  });

  it('mutantRepairSuspicionUnconfirmed: the long hold is repaired, nobody asked', async () => {
    const t = triageWith(() => [{ machine: 2, report: machine2(true) }], { mutantRepairSuspicionUnconfirmed: true });
    const outcome = t.triage.handle(suspicion);
    await t.settle();
    expect(await outcome).toBe('repair');
    expect([t.repaired, t.asked()]).toEqual([[LID], 0]);
  });

  it('a definite report is repaired without asking', async () => {
    const t = triageWith(() => 'silent');
    const outcome = t.triage.handle({ machine: 2, lock: LID, reason: 'agent-without-holders' });
    await t.settle();
    expect(await outcome).toBe('repair');
    expect([t.repaired, t.asked()]).toEqual([[LID], 0]);
  });
});

describe('stuck triage bounds', () => {
  it('a repeat while the lock is confirmed or repaired is dropped and counted; afterwards it is taken again', async () => {
    const t = triageWith(() => [
      { machine: 1, report: agentHeldBy2() },
      { machine: 2, report: machine2(false) },
    ]);
    const first = t.triage.handle(suspicion);
    expect(await t.triage.handle({ ...suspicion, machine: 2 })).toBe('busy'); // confirming
    t.scheduler.at(1.5 * MS, () => void t.triage.handle(suspicion).then((o) => expect(o).toBe('busy'))); // repairing
    await t.settle();
    expect(await first).toBe('repair');
    expect(t.triage.stats.droppedBusy).toBe(2);
    expect(t.triage.inFlight()).toBe(0);
    const again = t.triage.handle(suspicion);
    await t.settle();
    expect(await again).toBe('repair');
    expect(t.repaired).toEqual([LID, LID]);
  });

  it('suspicions over the rate are dropped; at most maxInFlight locks are in flight', async () => {
    const t = triageWith(() => 'silent', { suspicionsPerSecond: 1, suspicionBurst: 2, maxInFlight: 3 });
    const outcomes = [1, 2, 3].map((lock) => t.triage.handle({ ...suspicion, lock }));
    expect(await outcomes[2]).toBe('rate');
    // definite reports are not rate-limited, but the in-flight bound holds them too
    expect(await t.triage.handle({ machine: 1, lock: 7, reason: 'bouncing' })).toBe('repair');
    expect(await t.triage.handle({ machine: 1, lock: 8, reason: 'bouncing' })).toBe('full');
    await t.settle();
    expect(t.triage.stats).toMatchObject({ droppedRate: 1, droppedFull: 1, unanswered: 2 });
  });
});
