import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { FaultInjector, NO_FAULTS } from '../src/index.js';
import type { Delivery, EgressAction, FaultSpec } from '../src/index.js';
import { packet } from './support/packets.js';
import { TestRandom } from './support/seeded-random.js';

const to = (machine: number, type: 'acquire' | 'grant' | 'free' = 'grant', seq = 0): EgressAction => ({
  kind: 'unicast',
  machine,
  packet: packet({ type, seq }),
});

function run(injector: FaultInjector, count: number, action = (i: number) => to(1 + (i % 4), 'grant', i)): Delivery[] {
  const out: Delivery[] = [];
  for (let i = 0; i < count; i++) out.push(...injector.apply([action(i)], 0));
  return out;
}

describe('FaultInjector', () => {
  it('passes everything through untouched without faults, drawing no randomness', () => {
    const random = new TestRandom(1);
    const injector = new FaultInjector(random);
    const deliveries = run(injector, 100);
    expect(deliveries).toHaveLength(100);
    expect(deliveries.every((d) => d.delayNs === 0 && !d.duplicate)).toBe(true);
    expect(random.draws).toBe(0);
    expect(injector.spec).toBe(NO_FAULTS);
  });

  it('fans out multicasts, returns bounces to the ingress machine, and delivers nothing for drops', () => {
    const injector = new FaultInjector(new TestRandom(1));
    const p = packet({ type: 'acquire' });
    const deliveries = injector.apply(
      [
        { kind: 'multicast', machines: [2, 3], packet: p },
        { kind: 'bounce', packet: p },
        { kind: 'drop', reason: 'no-dst' },
      ],
      7,
    );
    expect(deliveries.map((d) => d.action.machine)).toEqual([2, 3, 7]);
    expect(deliveries.every((d) => d.action.kind === 'unicast' && d.action.packet === p)).toBe(true);
  });

  it('drops everything with loss = 1', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ loss: 1 }] });
    expect(run(injector, 1000)).toEqual([]);
    expect(injector.stats()).toMatchObject({ copies: 1000, lost: 1000, lostByType: { grant: 1000 } });
  });

  it('doubles everything with duplicate = 1', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ duplicate: 1 }] });
    const deliveries = run(injector, 500);
    expect(deliveries).toHaveLength(1000);
    expect(deliveries.filter((d) => d.duplicate)).toHaveLength(500);
    expect(deliveries[0]?.action).toEqual(deliveries[1]?.action);
  });

  it('loses about 10 % with loss = 0.1 over 10 000 packets: an exact count for the seed, inside a band', () => {
    const lostWith = (seed: number) => {
      const injector = new FaultInjector(new TestRandom(seed), { rules: [{ loss: 0.1 }] });
      return 10_000 - run(injector, 10_000).length;
    };
    const lost = lostWith(42);
    expect(lost).toBe(1031);
    expect(lost).toBeGreaterThanOrEqual(800);
    expect(lost).toBeLessThanOrEqual(1200);
    expect(lostWith(42)).toBe(lost); // deterministic given the Random
  });

  it('applies rules per packet type and per egress machine', () => {
    const byType = new FaultInjector(new TestRandom(1), { rules: [{ packetTypes: ['grant'], loss: 1 }] });
    const typed = run(byType, 100, (i) => to(1, i % 2 === 0 ? 'grant' : 'acquire'));
    expect(typed).toHaveLength(50);
    expect(typed.every((d) => d.action.packet.type === 'acquire')).toBe(true);

    const byMachine = new FaultInjector(new TestRandom(1), { rules: [{ machines: [3], loss: 1 }] });
    const p = packet();
    const fanned = byMachine.apply([{ kind: 'multicast', machines: [2, 3, 4], packet: p }], 1);
    expect(fanned.map((d) => d.action.machine)).toEqual([2, 4]);
  });

  it('delays within [delayNsMin, delayNsMax]', () => {
    const injector = new FaultInjector(new TestRandom(5), { rules: [{ delay: 1, delayNsMin: 100, delayNsMax: 300 }] });
    const delays = run(injector, 2000).map((d) => d.delayNs);
    expect(Math.min(...delays)).toBe(100);
    expect(Math.max(...delays)).toBe(300);
    expect(delays.every(Number.isInteger)).toBe(true);
    expect(injector.stats().delayed).toBe(2000);
  });

  it('reorders: held-back packets are overtaken by later ones', () => {
    const injector = new FaultInjector(new TestRandom(9), { rules: [{ reorder: 0.3, reorderNsMax: 5000 }] });
    const gapNs = 1000; // packets leave the switch 1 µs apart
    const arrivals = run(injector, 200).map((d) => ({ seq: d.action.packet.seq, atNs: d.action.packet.seq * gapNs + d.delayNs }));
    const delivered = [...arrivals].sort((a, b) => a.atNs - b.atNs || a.seq - b.seq).map((a) => a.seq);
    const overtaken = delivered.filter((seq, i) => delivered.slice(i + 1).some((later) => later < seq)).length;
    expect(overtaken).toBeGreaterThan(0);
    expect(arrivals).toHaveLength(200); // reordering loses nothing
    expect(injector.stats().reordered).toBeGreaterThan(30);
    expect(injector.stats().reordered).toBeLessThan(90);
    expect(arrivals.every((a) => a.atNs - a.seq * gapNs <= 5000)).toBe(true);
  });

  it('replays identically from the same seed', () => {
    const spec = { rules: [{ loss: 0.2, duplicate: 0.2, delay: 0.5, delayNsMax: 900, reorder: 0.1, reorderNsMax: 3000 }] };
    const a = run(new FaultInjector(new TestRandom(77), spec), 1000);
    const b = run(new FaultInjector(new TestRandom(77), spec), 1000);
    const c = run(new FaultInjector(new TestRandom(78), spec), 1000);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('refuses a bad spec and keeps the rules it had', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ loss: 1 }] });
    expect(() => injector.setSpec({ rules: [{ loss: 1.5 }] })).toThrow(ConfigError);
    expect(run(injector, 10)).toEqual([]);
    expect(() => new FaultInjector(new TestRandom(1), JSON.parse('{"rules":[{"dup":1}]}') as FaultSpec)).toThrow(/unknown key/);
  });
});

describe('FaultInjector: ingress rules (machine → switch link)', () => {
  const ingressOf = (injector: FaultInjector, type: 'acquire' | 'release' | 'free', from: number, seq = 0) => injector.applyIngress(packet({ type, seq }), from);

  it('passes packets in untouched without ingress rules, drawing nothing, even with egress rules set', () => {
    const random = new TestRandom(3);
    const injector = new FaultInjector(random, { rules: [{ loss: 0.5 }, { direction: 'egress', duplicate: 0.5 }] });
    const p = packet({ type: 'release' });
    expect(injector.applyIngress(p, 2)).toEqual([{ packet: p, delayNs: 0, duplicate: false }]);
    expect(random.draws).toBe(0);
    expect(injector.hasIngressRules).toBe(false);
    expect(injector.stats().ingress).toEqual({ packets: 1, lost: 0, duplicated: 0, delayed: 0, reordered: 0, lostByType: {} });
  });

  it('a rule without a direction stays an egress rule: it never touches a packet on its way in', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ loss: 1 }] });
    expect(ingressOf(injector, 'acquire', 1)).toHaveLength(1);
    expect(injector.apply([to(1)], 0)).toEqual([]);
  });

  it('an ingress rule never touches the egress copies', () => {
    const random = new TestRandom(1);
    const injector = new FaultInjector(random, { rules: [{ direction: 'ingress', loss: 1, duplicate: 1, delay: 0.5, delayNsMax: 10 }] });
    expect(run(injector, 50)).toHaveLength(50);
    expect(random.draws).toBe(0);
    expect(injector.stats()).toMatchObject({ copies: 50, lost: 0, duplicated: 0, delayed: 0 });
  });

  it('loses packets of one type on the way in: loss = 1 for ACQUIRE lets RELEASE through', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ direction: 'ingress', packetTypes: ['acquire'], loss: 1 }] });
    expect(ingressOf(injector, 'acquire', 1)).toEqual([]);
    expect(ingressOf(injector, 'release', 1).map((d) => [d.packet.type, d.delayNs, d.duplicate])).toEqual([['release', 0, false]]);
    expect(injector.stats().ingress).toMatchObject({ packets: 2, lost: 1, lostByType: { acquire: 1 } });
    expect(injector.stats().lost).toBe(0);
  });

  it('duplicates on the way in: the switch is given the same packet twice', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ direction: 'ingress', duplicate: 1 }] });
    const p = packet({ type: 'free', seq: 9 });
    const copies = injector.applyIngress(p, 4);
    expect(copies).toEqual([
      { packet: p, delayNs: 0, duplicate: false },
      { packet: p, delayNs: 0, duplicate: true },
    ]);
    expect(injector.stats().ingress.duplicated).toBe(1);
  });

  it('delays on the way in within [delayNsMin, delayNsMax], and reorders within reorderNsMax', () => {
    const injector = new FaultInjector(new TestRandom(5), { rules: [{ direction: 'ingress', delay: 1, delayNsMin: 100, delayNsMax: 300 }] });
    const delays = Array.from({ length: 1000 }, (_, i) => ingressOf(injector, 'acquire', 1, i)).flat().map((d) => d.delayNs);
    expect(delays).toHaveLength(1000);
    expect(Math.min(...delays)).toBe(100);
    expect(Math.max(...delays)).toBe(300);
    expect(injector.stats().ingress.delayed).toBe(1000);

    const reorder = new FaultInjector(new TestRandom(9), { rules: [{ direction: 'ingress', reorder: 0.5, reorderNsMax: 2000 }] });
    const held = Array.from({ length: 400 }, (_, i) => ingressOf(reorder, 'release', 1, i)).flat();
    expect(held).toHaveLength(400);
    expect(held.some((d) => d.delayNs > 0)).toBe(true);
    expect(held.every((d) => d.delayNs >= 0 && d.delayNs <= 2000)).toBe(true);
    expect(reorder.stats().ingress.reordered).toBeGreaterThan(150);
    expect(reorder.stats().ingress.reordered).toBeLessThan(250);
  });

  it('selects by sending machine on the way in, and by receiving machine on the way out', () => {
    const injector = new FaultInjector(new TestRandom(1), { rules: [{ direction: 'both', machines: [3], loss: 1 }] });
    expect(ingressOf(injector, 'acquire', 3)).toEqual([]);
    expect(ingressOf(injector, 'acquire', 2)).toHaveLength(1);
    // a packet from machine 3 whose copy goes to machine 2 passes the egress side; copies to 3 are lost
    const p = packet();
    expect(injector.apply([{ kind: 'multicast', machines: [2, 3], packet: p }], 3).map((d) => d.action.machine)).toEqual([2]);
    expect(injector.stats()).toMatchObject({ lost: 1, ingress: { lost: 1 } });
    expect(injector.hasIngressRules).toBe(true);
  });

  it('replays ingress draws identically from the same seed', () => {
    const spec = { rules: [{ direction: 'ingress' as const, loss: 0.2, duplicate: 0.2, delay: 0.5, delayNsMax: 900 }] };
    const go = (seed: number) => {
      const injector = new FaultInjector(new TestRandom(seed), spec);
      return Array.from({ length: 500 }, (_, i) => ingressOf(injector, 'acquire', 1 + (i % 3), i));
    };
    expect(go(11)).toEqual(go(11));
    expect(go(12)).not.toEqual(go(11));
  });
});
