import { describe, expect, it } from 'vitest';
import type { LockPacket } from '@lockfabric/ports';
import { FLAG_BOUNCED, FLAG_GRANTED, FLAG_HAS_AGENT, FLAG_INVALID, ackStatusOf } from '../src/wire.js';
import { fissSim } from './support/fiss-sim.js';

const is = (type: string, flags = 0) => (p: LockPacket) => p.type === type && (p.flags & flags) === flags;
const decisions = (sim: ReturnType<typeof fissSim>) => sim.sw.counters().decisions;
const holders = (sim: ReturnType<typeof fissSim>, node: number, lock = 0) => [...(sim.pool(node).agentOf(lock)?.holders ?? [])];

describe('fisslock network anomalies (spec §5), one scripted fault each', () => {
  it('lost FREE: dropped once on its way to the switch, retransmitted after the RTO, the lock is freed once', async () => {
    const sim = fissSim();
    const [a] = sim.nodes as [number];
    const c = sim.client(a, 0);
    const gp = c.acquire(0, 'exclusive');
    await sim.step();
    const g = await gp;
    const lost = sim.fault({ direction: 'out', machine: a, match: is('free'), action: 'drop' });
    await c.release(g); // ⑦
    await sim.step(1_000_000);
    expect(lost.fired?.type).toBe('free');
    expect(sim.pool(a).link.retransmissions).toBe(1);
    expect(decisions(sim)['free-accepted']).toBe(1);
    expect(decisions(sim)['dup-free']).toBeUndefined();
    expect(sim.seen.filter((s) => s.to === a && s.type === 'ack').map((s) => ackStatusOf(s.flags))).toEqual(['freed']);
    expect(sim.decider.meta(0)).toMatchObject({ free: true, mid: undefined, inca: 0 });
    expect(sim.pool(a).liveAgents().length + sim.pool(a).pendingAgents().length).toBe(0);
  });

  it('lost transfer GRANT and lost RELEASE: each retransmitted, the switch moves the agent once', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const ca = sim.client(a, 0);
    const cb = sim.client(b, 1);
    const gap = ca.acquire(0, 'exclusive');
    await sim.step();
    const ga = await gap;
    const gbp = cb.acquire(0, 'exclusive'); // ③ queued at a
    await sim.step();
    const lostGrant = sim.fault({ direction: 'out', machine: a, match: is('grant', FLAG_HAS_AGENT), action: 'drop' });
    await ca.release(ga); // ⑧
    await sim.step(1_000_000);
    const gb = await gbp;
    expect(lostGrant.fired).toBeDefined();
    expect(decisions(sim)['transfer-accepted']).toBe(1);
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: b });
    expect(holders(sim, b)).toEqual([`${b}:${gb.task}`]);
    // ⑨ from a machine without the agent: the RELEASE is lost once, then b's agent frees the lock
    const gap2 = ca.acquire(0, 'shared');
    await sim.step();
    const lostRelease = sim.fault({ direction: 'out', machine: b, match: is('release'), action: 'drop' });
    await cb.release(gb); // local ⑦→⑧: a's shared request is queued at b, so b transfers to a
    await sim.step(1_000_000);
    const ga2 = await gap2;
    expect(lostRelease.fired).toBeUndefined(); // b held the agent: its release was local
    const lostRemote = sim.fault({ direction: 'out', machine: b, match: is('release'), action: 'drop' });
    const gb2p = cb.acquire(0, 'shared'); // ② on a's shared agent
    await sim.step();
    const gb2 = await gb2p;
    await cb.release(gb2); // ⑨ — dropped once, retransmitted
    await sim.step(1_000_000);
    expect(lostRemote.fired?.type).toBe('release');
    expect(decisions(sim)['release-routed']).toBe(1);
    expect(holders(sim, a)).toEqual([`${a}:${ga2.task}`]);
    expect(sim.pool(a).agentOf(0)?.inca).toBe(1);
    expect(sim.decider.meta(0)).toMatchObject({ mode: 'shared', mid: a, inca: 1 });
  });

  it('duplicated sequenced packets: a duplicated FREE changes the switch once; a duplicated transfer GRANT installs once and is ACKed "duplicate"', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const ca = sim.client(a, 0);
    const gap = ca.acquire(0, 'exclusive');
    await sim.step();
    const ga = await gap;
    const gbp = sim.client(b, 1).acquire(0, 'exclusive');
    await sim.step();
    const dupGrant = sim.fault({ direction: 'in', machine: b, match: is('grant', FLAG_HAS_AGENT), action: 'duplicate' });
    await ca.release(ga);
    await sim.step();
    const gb = await gbp;
    expect(dupGrant.fired).toBeDefined();
    expect(sim.pool(b).counters.installs).toBe(1);
    expect(sim.pool(b).counters.duplicates).toBe(1);
    expect(sim.seen.filter((s) => s.to === a && s.type === 'ack').map((s) => ackStatusOf(s.flags)).sort()).toEqual(['accepted', 'duplicate']);
    expect(holders(sim, b)).toEqual([`${b}:${gb.task}`]);
    // a FREE duplicated on the wire into the switch: registers change once, the copy is only echoed
    const dupFree = sim.fault({ direction: 'out', machine: b, match: is('free'), action: 'duplicate' });
    await sim.client(b, 1).release(gb);
    await sim.step();
    expect(dupFree.fired).toBeDefined();
    expect(decisions(sim)['free-accepted']).toBe(1);
    expect(decisions(sim)['dup-free']).toBe(1);
    expect(sim.decider.meta(0)).toMatchObject({ free: true, mid: undefined });
    expect(sim.pool(b).liveAgents().length + sim.pool(b).pendingAgents().length).toBe(0);
  });

  it('ACQUIRE and RELEASE reordered: the ② holder’s RELEASE reaches the agent before its copy, is bounced and served after it', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const gap = sim.client(a, 0).acquire(0, 'shared');
    await sim.step();
    const ga = await gap;
    const late = sim.fault({ direction: 'in', machine: a, match: is('acquire', FLAG_GRANTED), action: { delayNs: 60_000 } });
    const cb = sim.client(b, 1);
    const gbp = cb.acquire(0, 'shared'); // ②
    await sim.step(20_000);
    const gb = await gbp;
    await cb.release(gb); // ⑨ overtakes the delayed ② copy
    await sim.step(1_000_000);
    expect(late.fired).toBeDefined();
    expect(sim.pool(a).counters.bounced).toBeGreaterThanOrEqual(1);
    expect(sim.seen.some((s) => s.to === a && s.type === 'release' && (s.flags & FLAG_BOUNCED) !== 0)).toBe(true);
    expect(holders(sim, a)).toEqual([`${a}:${ga.task}`]);
    expect(sim.pool(a).agentOf(0)?.inca).toBe(1);
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'shared', mid: a, inca: 1 });
  });

  it('ACQUIRE before the agent arrives: a ③ request reaches the machine whose ① GRANT is still in flight, bounces, and is served', async () => {
    const sim = fissSim();
    const [a, b] = sim.nodes as [number, number];
    const late = sim.fault({ direction: 'in', machine: a, match: is('grant', FLAG_HAS_AGENT), action: { delayNs: 30_000 } });
    const ca = sim.client(a, 0);
    const gap = ca.acquire(0, 'exclusive'); // ①, GRANT delayed
    const gbp = sim.client(b, 1).acquire(0, 'exclusive'); // ③ to a, before the agent
    await sim.step(100_000);
    const ga = await gap;
    expect(late.fired).toBeDefined();
    expect(sim.pool(a).counters.bounced).toBeGreaterThanOrEqual(1);
    expect(sim.pool(a).agentOf(0)?.wqueue.map((w) => w.mid)).toEqual([b]);
    await ca.release(ga);
    await sim.step();
    const gb = await gbp;
    expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: b, inca: 0 });
    expect(holders(sim, b)).toEqual([`${b}:${gb.task}`]);
  });

  for (const variant of ['free', 'transfer'] as const) {
    it(`delayed ② copy after the agent ${variant === 'free' ? 'was freed' : 'was transferred'}: the decider refuses the stale incarnation, the agent restores itself`, async () => {
      const sim = fissSim();
      const [a, b, c] = sim.nodes as [number, number, number];
      const ca = sim.client(a, 0);
      const gap = ca.acquire(0, 'shared');
      await sim.step();
      const ga = await gap;
      const late = sim.fault({ direction: 'in', machine: a, match: is('acquire', FLAG_GRANTED), action: { delayNs: 60_000 } });
      const cb = sim.client(b, 1);
      const gbp = cb.acquire(0, 'shared'); // ②: decider inca 1, the copy is late
      await sim.step(20_000);
      const gb = await gbp;
      const gcp = variant === 'transfer' ? sim.client(c, 2).acquire(0, 'exclusive') : undefined; // ③ at a
      await sim.step(10_000);
      await ca.release(ga); // a's agent sees no holders left: FREE / transfer with inca 0
      await sim.step(20_000);
      expect(decisions(sim)[variant === 'free' ? 'free-refused' : 'transfer-refused']).toBe(1);
      expect(sim.seen.some((s) => s.to === a && (s.flags & FLAG_INVALID) !== 0)).toBe(true);
      expect(sim.pool(a).counters.refusals).toBe(1);
      await sim.step(100_000); // the copy lands on the restored agent
      expect(late.fired).toBeDefined();
      expect(holders(sim, a)).toEqual([`${b}:${gb.task}`]);
      expect(sim.pool(a).agentOf(0)?.inca).toBe(1);
      expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'shared', mid: a, inca: 1 });
      await cb.release(gb); // ⑨: now the incarnations match
      await sim.step(1_000_000);
      if (variant === 'free') {
        expect(decisions(sim)['free-accepted']).toBe(1);
        expect(sim.decider.meta(0)).toMatchObject({ free: true, mid: undefined, inca: 0 });
      } else {
        const gc = await gcp!;
        expect(decisions(sim)['transfer-accepted']).toBe(1);
        expect(sim.decider.meta(0)).toMatchObject({ free: false, mode: 'exclusive', mid: c, inca: 0 });
        expect(holders(sim, c)).toEqual([`${c}:${gc.task}`]);
      }
      expect(sim.pool(a).liveAgents().length + sim.pool(a).pendingAgents().length).toBe(0);
    });
  }
});
