import { describe, expect, it } from 'vitest';
import { FISSLOCK_ARRAYS } from '../src/switch/index.js';
import { DECIDER_ARRAYS, FENCE_WINDOW, checkRepairPlan, ordersFor, repairLockState, switchImage } from '../src/recovery/index.js';
import type { AgentRecord, ClientRecord, RepairInput, ServerReport } from '../src/recovery/index.js';

// machines: A=1, B=2, C=3 (C fails in most cases)
const A = 1;
const B = 2;
const C = 3;

const granted = (mid: number, task: number, lid: number, mode: 'shared' | 'exclusive' = 'exclusive', startNs = 0): ClientRecord => ({ lid, mid, task, mode, state: 'granted', startNs });
const pending = (mid: number, task: number, lid: number, mode: 'shared' | 'exclusive' = 'exclusive', startNs = 0): ClientRecord => ({ lid, mid, task, mode, state: 'pending', startNs });
const agent = (machine: number, lid: number, mode: 'shared' | 'exclusive', holders: [number, number][], wqueue: [number, number, 'shared' | 'exclusive'][] = [], state: 'live' | 'pending' = 'live'): AgentRecord => ({
  lid,
  machine,
  mode,
  holders: holders.map(([mid, task]) => ({ mid, task })),
  wqueue: wqueue.map(([mid, task, m]) => ({ mid, task, mode: m })),
  state,
});
const report = (machine: number, agents: AgentRecord[], clients: ClientRecord[]): ServerReport => ({ machine, agents, clients });

function repairChecked(input: RepairInput) {
  const plan = repairLockState(input);
  expect(checkRepairPlan(input, plan, switchImage(plan, 'read-preferring'))).toEqual([]);
  return plan;
}

describe('fisslock recovery S2 (spec §7.2 steps 1–6)', () => {
  it('step 1: holders and waiters on the failed machine leave; the lock stays with the survivors', () => {
    const input: RepairInput = {
      failed: [C],
      reports: [report(A, [agent(A, 0, 'shared', [[A, 1], [C, 7]], [[C, 8, 'exclusive'], [B, 2, 'exclusive']])], [granted(A, 1, 0, 'shared')]), report(B, [], [pending(B, 2, 0)])],
    };
    const plan = repairChecked(input);
    expect(plan.agents).toEqual([{ lid: 0, machine: A, mode: 'shared', holders: [{ mid: A, task: 1, mode: 'shared' }], wqueue: [{ mid: B, task: 2, mode: 'exclusive' }], inca: 0 }]);
    expect(plan.survivors).toEqual([A, B]);
  });

  it('step 1: a lock held only by the failed machine is free again and its waiter is granted', () => {
    const input: RepairInput = { failed: [C], reports: [report(A, [], [pending(A, 1, 4)]), report(B, [], [])] };
    const plan = repairChecked(input);
    expect(plan.agents).toEqual([{ lid: 4, machine: A, mode: 'exclusive', holders: [{ mid: A, task: 1, mode: 'exclusive' }], wqueue: [], inca: 0 }]);
    expect(plan.wake).toEqual([{ lid: 4, mid: A, task: 1, mode: 'exclusive' }]);
  });

  it('step 2: a client holder missing from the agent (lost ② copy) is added; a holder the client knows nothing of is removed', () => {
    const input: RepairInput = {
      failed: [],
      reports: [report(A, [agent(A, 0, 'shared', [[A, 1], [A, 9]])], [granted(A, 1, 0, 'shared')]), report(B, [], [granted(B, 2, 0, 'shared')])],
    };
    const plan = repairChecked(input);
    expect(plan.agents[0]?.holders).toEqual([
      { mid: A, task: 1, mode: 'shared' },
      { mid: B, task: 2, mode: 'shared' },
    ]);
  });

  it('step 2: an agent holder whose client is still pending (GRANT lost or in flight) is granted and woken', () => {
    const input: RepairInput = { failed: [], reports: [report(A, [agent(A, 0, 'shared', [[A, 1], [B, 2]])], [granted(A, 1, 0, 'shared')]), report(B, [], [pending(B, 2, 0, 'shared')])] };
    const plan = repairChecked(input);
    expect(plan.agents[0]?.holders.map((h) => h.mid)).toEqual([A, B]);
    expect(plan.wake).toEqual([{ lid: 0, mid: B, task: 2, mode: 'shared' }]);
  });

  it('step 3: waiters keep the agent queue order, then unseen pending requests by start time', () => {
    const input: RepairInput = {
      failed: [],
      reports: [
        report(A, [agent(A, 0, 'exclusive', [[A, 1]], [[B, 5, 'exclusive']])], [granted(A, 1, 0), pending(A, 3, 0, 'exclusive', 300)]),
        report(B, [], [pending(B, 5, 0, 'exclusive', 900), pending(B, 6, 0, 'shared', 100)]),
      ],
    };
    const plan = repairChecked(input);
    expect(plan.agents[0]?.wqueue.map((w) => w.task)).toEqual([5, 6, 3]);
  });

  it('step 3: a queued request its client gave up on is dropped and reported as aborted', () => {
    const input: RepairInput = {
      failed: [],
      reports: [report(A, [agent(A, 0, 'exclusive', [[A, 1]], [[B, 5, 'exclusive']])], [granted(A, 1, 0)]), report(B, [], [{ ...pending(B, 5, 0), state: 'aborting' }])],
    };
    const plan = repairChecked(input);
    expect(plan.agents[0]?.wqueue).toEqual([]);
    expect(plan.abort).toEqual([{ lid: 0, mid: B, task: 5, reason: expect.any(String) }]);
  });

  it('step 4: an agent lost with the failed machine is rebuilt on a surviving holder', () => {
    // C hosted the shared lock's agent; A and B still hold it
    const input: RepairInput = { failed: [C], reports: [report(A, [], [granted(A, 1, 2, 'shared')]), report(B, [], [granted(B, 2, 2, 'shared')])] };
    const plan = repairChecked(input);
    expect(plan.agents).toEqual([expect.objectContaining({ lid: 2, machine: A, mode: 'shared' })]);
  });

  it('step 4: a live agent on a survivor stays where it is, and wins over a pending copy of an unconfirmed hand-over', () => {
    const input: RepairInput = {
      failed: [],
      reports: [
        report(A, [agent(A, 0, 'exclusive', [], [[B, 2, 'exclusive']], 'pending')], []),
        report(B, [agent(B, 0, 'exclusive', [[B, 2]])], [granted(B, 2, 0)]),
      ],
    };
    const plan = repairChecked(input);
    expect(plan.agents).toEqual([{ lid: 0, machine: B, mode: 'exclusive', holders: [{ mid: B, task: 2, mode: 'exclusive' }], wqueue: [], inca: 0 }]);
  });

  it('step 5: with no holders the head is granted with the shared run behind it, on the head machine', () => {
    const input: RepairInput = {
      failed: [C],
      reports: [
        report(A, [agent(A, 0, 'exclusive', [[C, 9]], [[B, 1, 'shared'], [A, 2, 'shared'], [B, 3, 'exclusive'], [A, 4, 'shared']])], [pending(A, 2, 0, 'shared'), pending(A, 4, 0, 'shared')]),
        report(B, [], [pending(B, 1, 0, 'shared'), pending(B, 3, 0)]),
      ],
    };
    const plan = repairChecked(input);
    expect(plan.agents).toEqual([
      {
        lid: 0,
        machine: B,
        mode: 'shared',
        holders: [
          { mid: B, task: 1, mode: 'shared' },
          { mid: A, task: 2, mode: 'shared' },
        ],
        wqueue: [
          { mid: B, task: 3, mode: 'exclusive' },
          { mid: A, task: 4, mode: 'shared' },
        ],
        inca: 0,
      },
    ]);
    expect(plan.wake.map((w) => w.task)).toEqual([1, 2]);
    expect(ordersFor(plan, A)).toEqual({ machine: A, agents: [], wake: [{ lid: 0, mid: A, task: 2, mode: 'shared' }], abort: [] });
  });

  it('step 5: neither holders nor waiters → the lock is free and has no agent', () => {
    const input: RepairInput = { failed: [C], reports: [report(A, [agent(A, 0, 'exclusive', [[C, 9]])], []), report(B, [], [])] };
    expect(repairChecked(input).agents).toEqual([]);
  });

  it('step 6 and S3: agents restart at incarnation 0; the switch image holds exactly the agents, policy bit from the queue, seq windows reset or fenced', () => {
    const input: RepairInput = {
      failed: [C],
      reports: [report(A, [agent(A, 0, 'shared', [[A, 1]], [[B, 2, 'exclusive']])], [granted(A, 1, 0, 'shared')]), report(B, [], [pending(B, 2, 0), granted(B, 3, 5)])],
    };
    const plan = repairChecked(input);
    expect(plan.agents.every((a) => a.inca === 0)).toBe(true);
    const image = switchImage(plan, 'starvation-prevention', (m) => (m === C ? 100 : 0));
    expect(image.held).toEqual([
      { lid: 0, mode: 'shared', mid: A, pref: true },
      { lid: 5, mode: 'exclusive', mid: B, pref: false },
    ]);
    expect(image.seq).toEqual([
      { machine: A, value: 0 },
      { machine: B, value: 0 },
      { machine: C, value: (100 - FENCE_WINDOW) >>> 0 },
    ]);
  });

  it('the register names are the switch program\'s', () => {
    expect(DECIDER_ARRAYS).toEqual(FISSLOCK_ARRAYS);
  });
});

describe('fisslock recovery invariant check', () => {
  const input: RepairInput = {
    failed: [C],
    reports: [report(A, [agent(A, 0, 'shared', [[A, 1], [C, 7]], [[C, 8, 'exclusive']])], [granted(A, 1, 0, 'shared')]), report(B, [], [])],
  };

  it('catches the mutant that keeps failed participants', () => {
    const plan = repairLockState(input, { mutantKeepFailedParticipants: true });
    expect(checkRepairPlan(input, plan).some((p) => p.includes('failed machine 3'))).toBe(true);
  });

  it('catches two agents for one lock, a wrong decider mode, a lost holder and an exclusion break', () => {
    const plan = repairLockState(input);
    const a = plan.agents[0]!;
    const twice = { ...plan, agents: [a, a] };
    expect(checkRepairPlan(input, twice).some((p) => p.includes('more than one agent'))).toBe(true);
    const image = switchImage(plan, 'read-preferring');
    const wrongMode = { ...image, held: image.held.map((h) => ({ ...h, mode: 'exclusive' as const })) };
    expect(checkRepairPlan(input, plan, wrongMode).some((p) => p.includes('switch says exclusive'))).toBe(true);
    const lostHolder = { ...plan, agents: [{ ...a, holders: [] }] };
    expect(checkRepairPlan(input, lostHolder).some((p) => p.includes('surviving holder 1:1'))).toBe(true);
    const twoWriters = { ...plan, agents: [{ ...a, mode: 'exclusive' as const, holders: [a.holders[0]!, { mid: B, task: 4, mode: 'exclusive' as const }] }] };
    expect(checkRepairPlan(input, twoWriters).some((p) => p.includes('exclusive with 2 holders'))).toBe(true);
  });
});
