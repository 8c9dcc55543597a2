import { describe, expect, it } from 'vitest';
import { FLAG_GRANTED, FLAG_HAS_AGENT } from '../src/wire.js';
import { fissSim } from './support/fiss-sim.js';

const holdersOf = (sim: ReturnType<typeof fissSim>, node: number, lock: number) => [...(sim.pool(node).agents.get(lock)?.holders ?? [])];

describe('fisslock workflows ①–⑨ (sim, no faults)', () => {
  it('① free lock: switch grants with an empty agent, installed on the requester', async () => {
    const sim = fissSim();
    const [a] = sim.nodes as [number];
    const p = sim.client(a, 0).acquire(0, 'exclusive');
    await sim.step();
    const g = await p;
    expect(sim.seen).toEqual([{ to: a, type: 'grant', machine: a, flags: FLAG_HAS_AGENT }]);
    expect(sim.decider.meta(0)).toEqual({ free: false, mode: 'exclusive', mid: a, inca: 0, pref: false });
    expect(holdersOf(sim, a, 0)).toEqual([`${a}:${g.task}`]);
  });

  it('② shared on shared: immediate GRANT plus a GRANTED copy to the agent machine, which counts the holder', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const first = sim.client(a, 0).acquire(0, 'shared');
    await sim.step();
    await first;
    sim.seen.length = 0;
    const second = sim.client(b, 1).acquire(0, 'shared');
    await sim.step();
    const g = await second;
    expect(sim.seen.filter((s) => s.type !== 'ack')).toEqual(
      expect.arrayContaining([
        { to: a, type: 'acquire', machine: b, flags: FLAG_GRANTED },
        { to: b, type: 'grant', machine: b, flags: 0 },
      ]),
    );
    expect(sim.decider.meta(0)).toMatchObject({ mode: 'shared', mid: a, inca: 1 });
    expect(sim.pool(a).agents.get(0)?.inca).toBe(1);
    expect(holdersOf(sim, a, 0)).toContain(`${b}:${g.task}`);
  });

  it('③ + ⑨ + ⑧: a conflicting request queues at the agent; the remote release hands the agent over through the decider', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const ca = sim.client(a, 0);
    const ga = ca.acquire(0, 'exclusive');
    await sim.step();
    const held = await ga;
    const gb = sim.client(b, 1).acquire(0, 'exclusive'); // ③
    await sim.step();
    expect(sim.pool(a).agents.get(0)?.wqueue.map((w) => w.mid)).toEqual([b]);
    sim.seen.length = 0;
    await ca.release(held); // ⑦→⑧ with a waiter: transfer GRANT via the switch
    await sim.step();
    await gb;
    expect(sim.seen.some((s) => s.to === b && s.type === 'grant' && (s.flags & FLAG_HAS_AGENT) !== 0)).toBe(true);
    expect(sim.pool(a).agents.has(0)).toBe(false);
    expect(sim.pool(a).pending.has(0)).toBe(false);
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: b });
  });

  it('④ ⑥ ⑦ local agent: compatible request granted locally, releases local, last one frees via FREE', async () => {
    const sim = fissSim();
    const [a] = sim.nodes as [number];
    const c0 = sim.client(a, 0);
    const c1 = sim.client(a, 1);
    const g0p = c0.acquire(0, 'shared');
    await sim.step();
    const g0 = await g0p;
    const packetsBefore = sim.sw.counters().packets;
    const g1 = await c1.acquire(0, 'shared'); // ④ no network
    expect(sim.sw.counters().packets).toBe(packetsBefore);
    await c0.release(g0); // ⑥
    expect(sim.sw.counters().packets).toBe(packetsBefore);
    await c1.release(g1); // ⑦
    await sim.step();
    expect(sim.sw.counters().decisions['free-accepted']).toBe(1);
    expect(sim.decider.meta(0)).toEqual({ free: true, mode: 'shared', mid: undefined, inca: 0, pref: false });
    expect(sim.pool(a).agents.size + sim.pool(a).pending.size).toBe(0);
  });

  it('⑤ incompatible local request queues locally and is granted by a transfer GRANT through the switch', async () => {
    const sim = fissSim();
    const [a] = sim.nodes as [number];
    const c0 = sim.client(a, 0);
    const g0p = c0.acquire(0, 'exclusive');
    await sim.step();
    const g0 = await g0p;
    const g1p = sim.client(a, 1).acquire(0, 'exclusive');
    await sim.step();
    expect(sim.pool(a).agents.get(0)?.wqueue).toHaveLength(1);
    await c0.release(g0);
    await sim.step();
    const g1 = await g1p;
    expect(sim.sw.counters().decisions['transfer-accepted']).toBe(1);
    expect(holdersOf(sim, a, 0)).toEqual([`${a}:${g1.task}`]);
  });

  it('⑨ release without a local agent goes through the decider to the agent', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const gap = sim.client(a, 0).acquire(0, 'shared');
    await sim.step();
    await gap;
    const cb = sim.client(b, 1);
    const gbp = cb.acquire(0, 'shared');
    await sim.step();
    const gb = await gbp;
    await cb.release(gb);
    await sim.step();
    expect(sim.sw.counters().decisions['release-routed']).toBe(1);
    expect(holdersOf(sim, a, 0)).toHaveLength(1);
  });
});
