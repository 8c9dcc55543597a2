import { describe, expect, it } from 'vitest';
import type { Clock } from '@lockfabric/ports';
import type { Waiter } from './agent.js';
import type { AgentValue } from './agent-state.js';
import { NO_ANCHORS } from './lifetime-anchors.js';

/** The watchdog reads agents through its view; these are mutable so a test can change one in place. */
type Agent = AgentValue & { holders: Set<string>; wqueue: Waiter[] };
let nextId = 1;
import { StuckWatchdog } from './stuck-watchdog.js';
import type { StuckReport } from './stuck-watchdog.js';

/** A hand-driven clock: `advance` fires the sleeps that come due, in order, and lets their continuations run. */
function manualClock() {
  let now = 0;
  const timers: { at: number; wake: () => void }[] = [];
  const clock: Clock = {
    nowNs: () => now,
    sleep: (ns) => new Promise<void>((wake) => timers.push({ at: now + ns, wake })),
  };
  const advance = async (ns: number): Promise<void> => {
    const until = now + ns;
    for (;;) {
      timers.sort((a, b) => a.at - b.at);
      const next = timers[0];
      if (!next || next.at > until) break;
      timers.shift();
      now = next.at;
      next.wake();
      for (let i = 0; i < 5; i++) await Promise.resolve();
    }
    now = until;
  };
  return { clock, advance, pending: () => timers.length };
}

function setup(tStuckNs = 1_000) {
  const { clock, advance, pending } = manualClock();
  const agents = new Map<number, Agent>();
  let orphan: string | undefined;
  const reports: StuckReport[] = [];
  const dog = new StuckWatchdog(tStuckNs, clock, { agent: (lid) => agents.get(lid), orphanedLocalHolder: () => orphan, stopped: () => false }, (r) => reports.push(r));
  return { dog, agents, reports, advance, pending, setOrphan: (h: string | undefined) => (orphan = h) };
}

const agent = (holders: string[], waiters = 0): Agent => ({
  id: nextId++,
  anchors: NO_ANCHORS,
  mode: 'shared',
  inca: 0,
  holders: new Set(holders),
  wqueue: Array.from({ length: waiters }, (_, i) => ({ mid: 2, task: i, mode: 'exclusive' as const })),
});

describe('StuckWatchdog', () => {
  it('a refused agent still without holders T_STUCK later is reported once; one that got a holder is not', async () => {
    const t = setup();
    t.agents.set(1, agent([]));
    t.agents.set(2, agent([]));
    t.dog.noteRefused(1);
    t.dog.noteRefused(2);
    t.agents.get(2)?.holders.add('1:5'); // the ② copy came
    await t.advance(999);
    expect(t.reports).toEqual([]);
    await t.advance(1);
    expect(t.reports.map((r) => [r.lid, r.reason])).toEqual([[1, 'agent-without-holders']]);
    t.dog.noteRefused(1);
    await t.advance(2_000);
    expect(t.reports).toHaveLength(1); // reported until cleared
    t.dog.clear(1);
    t.dog.noteRefused(1);
    await t.advance(1_000);
    expect(t.reports).toHaveLength(2);
  });

  it('a refusal resolved in time (clear: FREE accepted, agent installed) is not reported', async () => {
    const t = setup();
    t.agents.set(1, agent([]));
    t.dog.noteRefused(1);
    await t.advance(500);
    t.dog.clear(1);
    await t.advance(1_000);
    expect(t.reports).toEqual([]);
  });

  it('a local ② holder nobody knows T_STUCK later is reported; one a client holds is not', async () => {
    const t = setup();
    t.agents.set(1, agent(['1:7']));
    t.dog.noteLocalHolder(1, '1:7');
    await t.advance(1_000);
    expect(t.reports).toEqual([]);
    t.setOrphan('1:7');
    t.dog.noteLocalHolder(1, '1:7');
    await t.advance(1_000);
    expect(t.reports.map((r) => r.reason)).toEqual(['orphaned-holder']);
  });

  it('a queue behind unchanged holders is a suspicion; changed holders or an empty queue are not', async () => {
    const t = setup();
    const a = agent(['3:4'], 1);
    t.agents.set(1, a);
    t.dog.noteWaiter(1, a);
    a.holders.delete('3:4');
    a.holders.add('3:5');
    await t.advance(1_000);
    expect(t.reports).toEqual([]);
    t.dog.noteWaiter(1, a);
    await t.advance(1_000);
    expect(t.reports.map((r) => r.reason)).toEqual(['stalled-queue']);
    t.dog.dismiss(1);
    a.wqueue.length = 0;
    t.dog.noteWaiter(1, a);
    await t.advance(1_000);
    expect(t.reports).toHaveLength(1);
  });

  it('bounces for T_STUCK without a pause of T_STUCK/4 are reported; a pause starts a new spell', async () => {
    const t = setup();
    for (let i = 0; i < 6; i++) {
      t.dog.noteBounce(1);
      await t.advance(200);
    }
    expect(t.reports.map((r) => r.reason)).toEqual(['bouncing']);
    for (let i = 0; i < 6; i++) {
      t.dog.noteBounce(2);
      await t.advance(i === 2 ? 300 : 200); // a 300 ns pause (> 250) ends the spell
    }
    expect(t.reports).toHaveLength(1);
  });

  it('off (T_STUCK 0): no timer, no report', async () => {
    const t = setup(0);
    t.agents.set(1, agent([]));
    t.dog.noteRefused(1);
    for (let i = 0; i < 10; i++) t.dog.noteBounce(1);
    expect(t.pending()).toBe(0);
    await t.advance(10_000);
    expect(t.reports).toEqual([]);
  });
});
