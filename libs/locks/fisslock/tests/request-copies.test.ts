import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_GRANTED } from '../src/wire.js';
import { fissSim } from './support/fiss-sim.js';

const is = (type: string, flags = 0) => (p: LockPacket) => p.type === type && (p.flags & flags) === flags;
const decisions = (sim: ReturnType<typeof fissSim>) => sim.sw.counters().decisions;
const holders = (sim: ReturnType<typeof fissSim>, node: number, lock = 0) => [...(sim.pool(node).agentOf(lock)?.holders ?? [])];
const waiters = (sim: ReturnType<typeof fissSim>, node: number, lock = 0) => (sim.pool(node).agentOf(lock)?.wqueue ?? []).map((w) => `${w.mid}:${w.task}`);

/**
 * Once the FissLock benchmark (160 clients, Zipf 0.99, no faults, seed 8) left 23
 * acquires stuck until their 10 s timeout. A request travels as several copies; the agent pool
 * failed to tell they were one request in the places below (src/pool/request-copies.ts).
 */
describe('fisslock copies of one request: no stuck lock under contention', () => {
  it('a copy of its own request that a machine bounced and the switch then granted (①) is ACKed by the GRANT: nothing is resent, no ghost waiter', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const c0 = sim.client(a, 0);
    const c1 = sim.client(a, 1);
    // c0's ACQUIRE is granted (①, agent on a); c1's, routed to that agent (③), arrives after c0
    // released and the lock was freed: a has no agent, bounces its own client's request, and the
    // switch grants the bounced copy (①) — the GRANT is that copy's only answer
    const late = sim.fault({ direction: 'in', machine: a, match: is('acquire'), action: { delayNs: 50_000 } });
    const g0p = c0.acquire(0, 'exclusive');
    const g1p = c1.acquire(0, 'exclusive');
    await sim.step(10_000);
    await c0.release(await g0p); // ⑦ FREE
    await sim.step(100_000);
    const g1 = await g1p;
    expect(late.fired?.machine).toBe(a);
    expect(sim.pool(a).counters.bounced).toBe(1);
    expect(decisions(sim)['grant-free']).toBe(2);
    // the lock moves on before an RTO passes: b holds it (①) with nobody waiting
    await c1.release(g1);
    await sim.step(20_000);
    const cb = sim.client(b, 2);
    const gbp = cb.acquire(0, 'exclusive');
    await sim.step(1_000_000);
    const gb = await gbp;
    // before the fix the bounced copy stayed unACKed, was resent after the RTO as a DUP, routed to
    // b's agent and queued there: a waiter for a request that had been granted and released
    expect(sim.pool(a).link.retransmissions).toBe(0);
    expect(sim.pool(a).link.unacked).toBe(0);
    expect(decisions(sim)['dup-routed']).toBeUndefined();
    expect(holders(sim, b)).toEqual([`${b}:${gb.task}`]);
    expect(waiters(sim, b)).toEqual([]);
  });

  /** After the scenario: a's client asks exclusive, the shared holders release, the agent hands on to it (⑧, incarnations matching). */
  async function handsOn(sim: ReturnType<typeof fissSim>, agentAt: number, to: number, release: () => Promise<void>) {
    let granted = false;
    const gp = sim.client(to, 9)
      .acquire(0, 'exclusive')
      .then((g) => {
        granted = true;
        return g;
      });
    await sim.step();
    expect(waiters(sim, agentAt)).toHaveLength(1);
    await release();
    await sim.step(1_000_000);
    expect(granted).toBe(true);
    const g = await gp;
    expect(decisions(sim)['transfer-refused']).toBeUndefined();
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: to, inca: 0 });
    expect(holders(sim, to)).toEqual([`${to}:${g.task}`]);
  }

  for (const order of ['copy first', 'release first'] as const) {
    it(`a ② holder also queued at the agent by a DUP copy of an earlier hop of its request (${order}): counted once, the lock is handed on`, async () => {
      const sim = fissSim();
      const [a, b, c] = sim.nodes as [number, number, number];
      const ca = sim.client(a, 0);
      const gap = ca.acquire(0, 'exclusive');
      await sim.step();
      const ga = await gap;
      const gcp = sim.client(c, 2).acquire(0, 'shared'); // ③ at a
      await sim.step();
      // b's shared ACQUIRE reaches a while a's agent is on its way to c (⑧): a bounces it, and the
      // bounced copy is decided ② against c's shared agent (GRANT to b, GRANTED copy to c, late
      // here). The first hop — b's own ACQUIRE — reaches the switch a second time (a retransmission):
      // a DUP the decider routes to c, which queues it: a ghost waiter of a task holding the lock.
      // The two copies have different senders, so c's receive dedup cannot tell they are one request.
      const twice = sim.fault({ direction: 'out', machine: b, match: is('acquire'), action: { duplicateAfterNs: 40_000 } });
      const late = sim.fault({ direction: 'in', machine: c, match: is('acquire', FLAG_GRANTED), action: { delayNs: 60_000 } });
      const cb = sim.client(b, 1);
      const gbp = cb.acquire(0, 'shared');
      await sim.step(1_000);
      await ca.release(ga);
      await sim.step(order === 'copy first' ? 100_000 : 48_000); // the DUP is queued at c by then; the copy lands at about +66 µs
      const gb = await gbp;
      const gc = await gcp;
      expect(twice.fired).toBeDefined();
      expect(decisions(sim)['grant-shared']).toBe(1);
      expect(decisions(sim)['dup-routed']).toBe(1);
      await cb.release(gb); // ⑨, flagged GRANTED
      await sim.step(100_000);
      expect(late.fired).toBeDefined();
      expect(sim.pool(c).counters.bounced > 0).toBe(order === 'release first'); // the RELEASE waits for its copy
      // copy first, before the fix: the copy was answered "duplicate" (inca 0 against the decider's
      // 1) and the RELEASE took the ghost for an aborted waiter. Release first: the RELEASE removed
      // the ghost, then the copy added a holder nobody releases. Either way the lock was stuck.
      expect(sim.pool(c).agentOf(0)?.inca).toBe(1);
      expect(holders(sim, c)).toEqual([`${c}:${gc.task}`]);
      expect(waiters(sim, c)).toEqual([]);
      expect(sim.decider.meta(0)).toMatchObject({ mode: 'shared', mid: c, inca: 1 });
      await handsOn(sim, c, a, () => sim.client(c, 2).release(gc));
    });
  }

  it('the DUP copy and the decided copy are one packet: the dedup tells the ② copy apart (src:seq:g), which turns the ghost into the holder it is', async () => {
    const sim = fissSim();
    const [a, b, c] = sim.nodes as [number, number, number];
    const ca = sim.client(a, 0);
    const gap = ca.acquire(0, 'shared');
    await sim.step();
    const ga = await gap;
    // b's ACQUIRE reaches the switch twice: the first is decided ② (its GRANTED copy to a is late),
    // the second is a DUP of the same src:seq, routed to a and queued there before the copy arrives
    sim.fault({ direction: 'out', machine: b, match: is('acquire'), action: { duplicateAfterNs: 1_000 } });
    const late = sim.fault({ direction: 'in', machine: a, match: is('acquire', FLAG_GRANTED), action: { delayNs: 30_000 } });
    const cb = sim.client(b, 1);
    const gbp = cb.acquire(0, 'shared');
    await sim.step(100_000);
    const gb = await gbp;
    expect(late.fired).toBeDefined();
    // the ② copy is not taken for the DUP's second arrival: it replaces the ghost the DUP queued
    expect(sim.pool(a).counters.duplicates).toBe(0);
    expect(sim.pool(a).counters.queuedThenGranted).toBe(1);
    await cb.release(gb); // ⑨, flagged GRANTED
    await sim.step(3_000_000);
    // nothing left to write off: the copy was counted when it arrived
    expect(sim.pool(a).counters.writtenOff).toBe(0);
    expect(sim.pool(a).agentOf(0)?.inca).toBe(1);
    expect(holders(sim, a)).toEqual([`${a}:${ga.task}`]);
    expect(waiters(sim, a)).toEqual([]);
    await handsOn(sim, a, c, () => ca.release(ga));
  });
});
