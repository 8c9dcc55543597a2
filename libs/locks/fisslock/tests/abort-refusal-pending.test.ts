import { describe, expect, it } from 'vitest';
import { FLAG_ABORT, FLAG_INVALID, taskKey } from '../src/wire.js';
import { pendingOutlivesAbortRefusal } from '../src/pool/abort-refusal.js';
import { lockState, NO_AGENT } from './support/lock-state.js';
import { loggedSim } from './support/packet-log.js';

/**
 * A refused timeout-free (spec §5.2) reaching a machine whose agent is pending. Found by the
 * both-links sweep (10 %, seed 370): machine A, with no agent for a lock the decider said it held
 * shared (inca 4), reissued an unREACHED abort that then waited behind a sequence gap; meanwhile a
 * refused timeout-free had A build an empty agent, which counted the ② copies (inca 4) and handed
 * the lock on by transfer. The waiting abort reached the switch just before the transfer GRANT:
 * still mid = A and inca 4 ≠ 0, so it was refused and an INVALID FREE [ABORT] came back. The pool
 * took it for a refusal of its own pending agent and restored that agent, live, at inca 0; then the
 * switch accepted the transfer (inca 4 = 4): two agents, and A's stale shared agent granted a local
 * reader (④) while another machine held the lock exclusively.
 */
describe('fisslock: a refused timeout-free never restores a pending agent', () => {
  it('the transfer GRANT queued behind the abort is accepted; the machine keeps no agent and grants no local reader', async () => {
    const sim = loggedSim();
    const [a, b, c] = sim.nodes as [number, number, number];
    const ca = sim.client(a, 0);
    const ga = ca.acquire(0, 'shared');
    await sim.step();
    const holdA = await ga; // ①: the agent is at A
    const gb = sim.client(b, 0).acquire(0, 'shared');
    await sim.step();
    const holdB = await gb; // ②: decider inca 1, A's agent counts the copy
    const gc = sim.client(c, 0).acquire(0, 'exclusive'); // ③: queued at A
    await sim.step();
    await sim.client(b, 0).release(holdB); // ⑨ through the switch to A's agent
    await sim.step();
    expect(lockState(sim, 0).decider).toMatchObject({ mode: 'shared', mid: a, inca: 1 });
    // the unREACHED abort of some earlier request of A (in the seed, reissued while A had no agent
    // and held back by a gap): sequenced on A's link just before the transfer GRANT
    const from = sim.log.mark();
    sim.pool(a).link.send({ type: 'release', lock: 0, machine: a, task: taskKey(1, 99), mode: 'shared', incarnation: 0, flags: FLAG_ABORT });
    await ca.release(holdA); // ⑧: the agent goes pending, its transfer GRANT (inca 1) follows the abort
    await sim.step();
    const holdC = await gc;
    expect(sim.log.lines(from)).toEqual([
      'A→sw release A/1 [ABORT]',
      'A→sw grant C/0 X [AGENT,CUR_SHARED] inca=1',
      'sw→A free S [INVALID,ABORT] inca=0', // timeout-free refused: inca 1 ≠ 0
      'sw→C grant C/0 X [AGENT,CUR_SHARED] inca=1', // the transfer is accepted right after
      'C→sw ack accepted →A',
      'sw→A ack accepted →A',
    ]);
    expect(sim.sw.counters().decisions['timeout-free-refused']).toBe(1);
    expect(sim.sw.counters().decisions['transfer-accepted']).toBe(1);
    // A keeps nothing: the refusal answered the abort, the ACK settled the pending agent
    expect(lockState(sim, 0)).toEqual({
      decider: { free: false, mode: 'exclusive', mid: c, inca: 0, pref: false },
      machines: { A: NO_AGENT, B: NO_AGENT, C: { agent: { mode: 'X', inca: 0, holders: ['C/0#1'], wqueue: [] }, pending: false, unacked: 0 } },
    });
    // a reader on A goes through the switch and waits for C's exclusive hold (no local ④ grant)
    let readerGranted = false;
    const reader = sim.client(a, 1).acquire(0, 'shared').then((g) => {
      readerGranted = true;
      return g;
    });
    await sim.step();
    expect(readerGranted).toBe(false);
    await sim.client(c, 0).release(holdC);
    await sim.step();
    expect(readerGranted).toBe(true);
    await sim.client(a, 1).release(await reader);
    await sim.step();
    expect(sim.decider.meta(0).free).toBe(true);
  });

  it('the rule: only an INVALID FREE carrying ABORT (a refused timeout-free) with a pending agent leaves it alone', () => {
    const refusal = { type: 'free' as const, lock: 0, machine: 1, task: 0, mode: 'shared' as const, incarnation: 0, seq: 1, flags: FLAG_INVALID | FLAG_ABORT };
    expect(pendingOutlivesAbortRefusal(refusal, true)).toBe(true);
    expect(pendingOutlivesAbortRefusal(refusal, false)).toBe(false); // no agent here: build the empty one (§5.2)
    expect(pendingOutlivesAbortRefusal({ ...refusal, flags: FLAG_INVALID }, true)).toBe(false); // the pending agent's own FREE refused: restore it
    expect(pendingOutlivesAbortRefusal({ ...refusal, type: 'grant', flags: FLAG_INVALID }, true)).toBe(false); // its transfer refused: restore it
  });
});
