import { describe, expect, it } from 'vitest';
import type { LockPacket, NodeId } from '@lockfabric/ports';
import { FLAG_VOID } from '../src/wire.js';
import { fissSim } from './support/fiss-sim.js';

const decisions = (sim: ReturnType<typeof fissSim>) => sim.sw.counters().decisions;

/**
 * Both-links seed 2, second half, scripted. Machine a's agent sends a FREE the switch does not see
 * (lost on a's ingress link, several times in a row) although the decider has already moved on: in
 * the seed a timeout-free of another task of a freed the lifetime this agent belonged to (the
 * first half, abort-behind-acquire.test.ts), b took the lock (①) and a's next request queued at
 * b. That state is planted here: b holds the lock, a1 waits at b, and a still has the old agent.
 * b's release transfers the lock to a1, and the new agent makes a's old FREE void. Dropped from
 * the link (the rule before), its seq stayed a hole: the switch takes only `seq == last+1`, so every
 * later packet of a was dropped as a gap for ever and a's next FREE never freed the lock. Voided,
 * the seq is filled by a filler the switch only routes back to a; the FREE is never applied.
 */
async function freeVoidedByTransfer() {
  const sim = fissSim();
  const [a, b] = sim.nodes as [NodeId, NodeId];
  const a1 = sim.client(a, 1);
  const b0 = sim.client(b, 0);
  const held = b0.acquire(0, 'exclusive'); // ① at b
  await sim.step();
  const gb = await held;
  const waiting = a1.acquire(0, 'exclusive'); // ③ queued at b's agent
  await sim.step();
  const staleTask = 777;
  sim.pool(a).restoreAgent(0, { mode: 'exclusive', holders: [{ mid: a, task: staleTask }], wqueue: [] });
  // a's FREE is lost on the way to the switch until the transfer to a has arrived
  const lost = Array.from({ length: 4 }, () => sim.fault({ direction: 'out', machine: a, match: (p: LockPacket) => p.type === 'free', action: 'drop' }));
  expect(sim.pool(a).tryLocalRelease(0, staleTask)).toBe('done'); // ⑦: FREE (exclusive: no incarnation check)
  await sim.step(10_000);
  await b0.release(gb); // ⑧ transfer to a1
  await sim.step(20_000);
  const g1 = await waiting;
  await sim.step(2_000_000); // the FREE's seq is resent (as the filler, or not at all)
  const heldAfterResends = sim.decider.meta(0);
  await a1.release(g1); // ⑦ a's new agent frees the lock
  await sim.step(2_000_000);
  return { sim, a, lost, heldAfterResends, end: sim.decider.meta(0), counters: sim.pool(a).counters, unacked: sim.pool(a).link.unacked };
}

describe('a FREE made void by a new agent keeps its seq (both-links seed 2)', () => {
  it('the FREE is resent as a filler: the switch never applies it, and a’s next FREE frees the lock', async () => {
    const r = await freeVoidedByTransfer();
    expect(r.lost.filter((f) => f.fired).length).toBeGreaterThan(0);
    expect(r.counters.voidedOnInstall).toBe(1);
    // the void FREE did not free the lifetime a now holds
    expect(r.heldAfterResends).toMatchObject({ free: false, mid: r.a });
    // only a's last FREE was accepted; the filler was routed, never decided as a FREE
    expect(decisions(r.sim)['free-accepted']).toBe(1);
    expect(decisions(r.sim)['transfer-entry']).toBeGreaterThanOrEqual(1);
    expect(r.sim.seen.some((p) => p.to === r.a && p.type === 'transfer' && p.machine === r.a && (p.flags & FLAG_VOID) !== 0)).toBe(true);
    expect(r.end).toMatchObject({ free: true, mid: undefined });
    expect(r.unacked).toBe(0);
    await r.sim.stop();
  });
});
