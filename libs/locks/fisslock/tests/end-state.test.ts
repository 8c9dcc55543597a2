import { describe, expect, it } from 'vitest';
import { FISSLOCK_ARRAYS } from '../src/switch/index.js';
import { checkEndState } from './support/end-state.js';
import { fissSim } from './support/fiss-sim.js';
import { AgentAudit } from './support/sweep.js';

/**
 * The sweeps' state checks against hand-broken states: lock 0 is granted ① to machine A, then the
 * decider's registers (through the control plane, as the switch CPU would) or A's pool are bent.
 */
async function heldAtA() {
  const sim = fissSim();
  const [a, b] = sim.nodes as [number, number];
  const client = sim.client(a, 0);
  const p = client.acquire(0, 'exclusive');
  await sim.step();
  const grant = await p;
  return { sim, a, b, client, grant };
}

describe('the end-state check (spec §11 properties 4, 5 at quiescence)', () => {
  it('passes a run that ended well: lock released, nothing left anywhere', async () => {
    const { sim, client, grant } = await heldAtA();
    await client.release(grant);
    await sim.step();
    expect(checkEndState(sim)).toEqual({ checked: true, problems: [], stuck: [] });
  });

  it('lists a lock still held at the end as stuck (Lemma 2: every client done, so it should be free)', async () => {
    const { sim, a } = await heldAtA();
    const end = checkEndState(sim);
    expect(end.problems).toEqual([]);
    expect(end.stuck).toEqual([`lock 0 (exclusive at ${a}, holders [${a}:1], queue []): held with every client done, agent inca 0, decider 0`]);
  });

  it('finds an agent away from the machine the decider names, and the held lock without an agent there', async () => {
    const { sim, a, b } = await heldAtA();
    sim.sw.writeRegister(FISSLOCK_ARRAYS.mid, 0, b + 1);
    expect(checkEndState(sim).problems).toEqual([`lock 0: agent on ${a}, the decider names ${b}`, `lock 0: held exclusive with no agent on ${b}`]);
  });

  it('finds an agent for a free lock', async () => {
    const { sim, a } = await heldAtA();
    sim.sw.writeRegister(FISSLOCK_ARRAYS.free, 0, 1);
    sim.sw.writeRegister(FISSLOCK_ARRAYS.mid, 0, 0);
    expect(checkEndState(sim).problems).toEqual([`lock 0: agent on ${a} for a free lock`]);
  });

  it('finds an agent whose mode is not the decider’s (Lemma 1)', async () => {
    const { sim, a } = await heldAtA();
    sim.sw.writeRegister(FISSLOCK_ARRAYS.rw, 0, 1);
    expect(checkEndState(sim).problems).toEqual([`lock 0 (shared at ${a}, holders [${a}:1], queue []): agent mode exclusive (Lemma 1)`]);
  });

  it('finds a pending agent left behind, a packet never acknowledged and a task still waiting', async () => {
    const { sim, a } = await heldAtA();
    const pool = sim.pool(a);
    const agent = pool.agentOf(0)!;
    pool.setStateForTest(0, { kind: 'pending', agent });
    void sim.client(a, 1).acquire(1, 'shared'); // sent, never delivered: the sim is not stepped
    const end = checkEndState(sim);
    expect(end.problems).toEqual([`lock 0: pending agent left on ${a}`, `machine ${a}: 1 packets unacknowledged`, `machine ${a}: task ${(1 << 20) | 1} still waits for lock 1`, `lock 0: held exclusive with no agent on ${a}`]);
  });
});

describe('the one-agent-per-lock audit counts the agent the decider names even where none is live', () => {
  it('a live agent plus the decider naming another machine is two agents (live agents alone would count one)', async () => {
    const { sim, a, b } = await heldAtA();
    const audit = new AgentAudit(sim);
    audit.check(0);
    expect(audit.agentsPerLockMax).toBe(1);
    // A's agent is live while the decider points at B: B's is pending, in flight or lost
    sim.sw.writeRegister(FISSLOCK_ARRAYS.mid, 0, b + 1);
    audit.check(0);
    expect(audit.agentsPerLockMax).toBe(2);
    expect([...sim.nodes].filter((n) => (sim.pool(n).agentOf(0) !== undefined))).toEqual([a]);
  });

  it('an agent in flight to the machine the decider names is one agent, not none and not two', async () => {
    const { sim, a, b, client, grant } = await heldAtA();
    const waiting = sim.client(b, 1).acquire(0, 'exclusive'); // ③ at A
    await sim.step();
    const audit = new AgentAudit(sim);
    await client.release(grant); // ⑧: pending at A, GRANT on its way to B
    await sim.step(2_000); // the switch has accepted the transfer; B has not installed yet
    expect(sim.decider.meta(0).mid).toBe(b);
    expect((sim.pool(b).agentOf(0) !== undefined)).toBe(false);
    expect((sim.pool(a).pendingAgentOf(0) !== undefined)).toBe(true);
    audit.check(0);
    await sim.step();
    await waiting;
    audit.check(0);
    expect(audit.agentsPerLockMax).toBe(1);
  });
});
