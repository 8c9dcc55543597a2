import type { LockPacket, NodeId } from '@lockfabric/ports';
import { SeededRandom } from '@lockfabric/sim';
import { FaultInjector, Switch, forwardProgram } from '@lockfabric/switch';
import type { FaultSpec, SwitchProgram } from '@lockfabric/switch';
import { describe, expect, it, vi } from 'vitest';
import { ManualTimers, packet } from '../tests/support.js';
import { DROP_INGRESS_FAULT_LOSS, DROP_RECOVERY_CLOSED, Dataplane } from './dataplane.js';

/** Multicasts to `dst` and dst+1; throws on lock 13, as a buggy program would. */
const fanOutProgram: SwitchProgram = {
  name: 'fan-out',
  build() {},
  process(p) {
    if (p.lock === 13) throw new Error('lock 13 trips the program');
    return [{ kind: 'multicast', machines: [p.dst ?? 0, (p.dst ?? 0) + 1], packet: p }];
  },
};

function setup(options: { program?: SwitchProgram; onProgramError?: 'throw' | 'drop'; faults?: FaultSpec; maxDelayedPackets?: number; egress?: (m: NodeId, p: LockPacket) => void } = {}) {
  const timers = new ManualTimers();
  const out: { machine: NodeId; packet: LockPacket }[] = [];
  const errors: string[] = [];
  const faults = new FaultInjector(new SeededRandom(7), options.faults);
  const sw = new Switch(options.program ?? forwardProgram(), { onProgramError: options.onProgramError ?? 'throw' });
  const dataplane = new Dataplane({
    sw,
    faults,
    egress: options.egress ?? ((machine, p) => out.push({ machine, packet: p })),
    timers,
    onError: (message) => errors.push(message),
    ...(options.maxDelayedPackets === undefined ? {} : { maxDelayedPackets: options.maxDelayedPackets }),
  });
  return { dataplane, out, errors, timers, sw, faults };
}

describe('Dataplane', () => {
  it('forwards a packet to its dst', () => {
    const { dataplane, out } = setup();
    const p = packet({ dst: 2 });
    dataplane.handle(p, 1);
    expect(out).toStrictEqual([{ machine: 2, packet: p }]);
    expect(dataplane.stats()).toStrictEqual({ packetsIn: 1, faultPathPackets: 0, copiesOut: 1, dropsByReason: {}, delayedInFlight: 0 });
  });

  it('builds no fault copies while no rule is in force, and goes through the injector once one is', () => {
    const { dataplane, out, faults } = setup({ program: fanOutProgram });
    const apply = vi.spyOn(faults, 'apply');
    const applyIngress = vi.spyOn(faults, 'applyIngress');
    for (let i = 0; i < 100; i++) dataplane.handle(packet({ dst: 2, seq: i }), 1);
    expect(apply).not.toHaveBeenCalled();
    expect(applyIngress).not.toHaveBeenCalled();
    expect(out).toHaveLength(200);
    expect(dataplane.stats()).toMatchObject({ packetsIn: 100, faultPathPackets: 0, copiesOut: 200 });
    faults.setSpec({ rules: [{ machines: [3], loss: 1 }] });
    for (let i = 0; i < 10; i++) dataplane.handle(packet({ dst: 2, seq: 100 + i }), 1);
    expect(apply).toHaveBeenCalledTimes(10);
    expect(applyIngress).toHaveBeenCalledTimes(10);
    expect(dataplane.stats()).toMatchObject({ packetsIn: 110, faultPathPackets: 10, copiesOut: 210, dropsByReason: { 'fault-loss': 10 } });
    faults.setSpec({ rules: [] });
    dataplane.handle(packet({ dst: 2, seq: 110 }), 1);
    expect(apply).toHaveBeenCalledTimes(10);
    expect(dataplane.stats().faultPathPackets).toBe(10);
  });

  it('without rules sends bounces to the sender and counts program drops, as the fault path does', () => {
    const bounceProgram: SwitchProgram = {
      name: 'bounce',
      build() {},
      process: (p) => [{ kind: 'bounce', packet: p }, { kind: 'drop', reason: 'test-drop' }],
    };
    const { dataplane, out } = setup({ program: bounceProgram });
    const p = packet({ dst: 2 });
    dataplane.handle(p, 5);
    expect(out).toStrictEqual([{ machine: 5, packet: p }]);
    expect(dataplane.stats()).toMatchObject({ faultPathPackets: 0, copiesOut: 1, dropsByReason: { 'test-drop': 1 } });
  });

  it("counts the program's drops by their reason", () => {
    const { dataplane, out } = setup();
    dataplane.handle(packet(), 1);
    expect(out).toStrictEqual([]);
    expect(dataplane.stats().dropsByReason).toStrictEqual({ 'no-dst': 1 });
  });

  it('drops every copy under loss=1 and counts them as fault losses', () => {
    const { dataplane, out } = setup({ faults: { rules: [{ loss: 1 }] } });
    dataplane.handle(packet({ dst: 2 }), 1);
    expect(out).toStrictEqual([]);
    expect(dataplane.stats().dropsByReason).toStrictEqual({ 'fault-loss': 1 });
  });

  it('loses only the copies a per-machine fault selects', () => {
    const { dataplane, out } = setup({ program: fanOutProgram, faults: { rules: [{ machines: [3], loss: 1 }] } });
    dataplane.handle(packet({ dst: 2 }), 1);
    expect(out.map((o) => o.machine)).toStrictEqual([2]);
    expect(dataplane.stats()).toMatchObject({ copiesOut: 1, dropsByReason: { 'fault-loss': 1 } });
  });

  it('delivers a duplicate under duplicate=1', () => {
    const { dataplane, out } = setup({ faults: { rules: [{ duplicate: 1 }] } });
    dataplane.handle(packet({ dst: 2 }), 1);
    expect(out.map((o) => o.machine)).toStrictEqual([2, 2]);
  });

  it('holds delayed copies until their time and drops them past the bound', () => {
    const { dataplane, out, timers } = setup({ faults: { rules: [{ delay: 1, delayNsMin: 2_000_000, delayNsMax: 2_000_000 }] }, maxDelayedPackets: 1 });
    dataplane.handle(packet({ dst: 2, seq: 1 }), 1);
    dataplane.handle(packet({ dst: 2, seq: 2 }), 1);
    expect(out).toStrictEqual([]);
    expect(dataplane.stats()).toMatchObject({ delayedInFlight: 1, dropsByReason: { 'delay-overflow': 1 } });
    timers.advance(1);
    expect(out).toStrictEqual([]);
    timers.advance(1);
    expect(out.map((o) => o.packet.seq)).toStrictEqual([1]);
    expect(dataplane.stats().delayedInFlight).toBe(0);
  });

  it('drain sends the held copies at once', () => {
    const { dataplane, out } = setup({ faults: { rules: [{ delay: 1, delayNsMin: 1e9, delayNsMax: 1e9 }] } });
    dataplane.handle(packet({ dst: 4 }), 1);
    dataplane.drain();
    expect(out.map((o) => o.machine)).toStrictEqual([4]);
  });

  it.each(['throw', 'drop'] as const)('counts a packet that makes the program throw (policy %s), and the next packet still goes through', (policy) => {
    const { dataplane, out, errors } = setup({ program: fanOutProgram, onProgramError: policy });
    dataplane.handle(packet({ lock: 13, dst: 2 }), 1);
    dataplane.handle(packet({ lock: 14, dst: 2 }), 1);
    expect(out.map((o) => [o.packet.lock, o.machine])).toStrictEqual([
      [14, 2],
      [14, 3],
    ]);
    expect(dataplane.stats().dropsByReason).toStrictEqual({ 'program-error': 1 });
    if (policy === 'throw') expect(errors).toStrictEqual([expect.stringMatching(/program 'fan-out' failed on packet acquire lock 13 from machine 1: lock 13 trips/)]);
  });

  it('contains a failing egress: counted as an internal error, never thrown', () => {
    const { dataplane, errors } = setup({
      egress: () => {
        throw new Error('link down');
      },
    });
    expect(() => dataplane.handle(packet({ dst: 2 }), 1)).not.toThrow();
    expect(dataplane.stats().dropsByReason).toStrictEqual({ 'internal-error': 1 });
    expect(errors[0]).toMatch(/link down/);
  });

  describe('ingress faults (the sender\'s link into the switch)', () => {
    it('an ACQUIRE lost on the way in is never decided; the RELEASE after it is', () => {
      const { dataplane, out, sw } = setup({ faults: { rules: [{ direction: 'ingress', packetTypes: ['acquire'], loss: 1 }] } });
      dataplane.handle(packet({ type: 'acquire', dst: 2, seq: 1 }), 1);
      dataplane.handle(packet({ type: 'release', dst: 2, seq: 2 }), 1);
      expect(out.map((o) => [o.machine, o.packet.type])).toStrictEqual([[2, 'release']]);
      expect(sw.counters()).toMatchObject({ packets: 1, packetsByType: { release: 1 } });
      expect(dataplane.stats()).toMatchObject({ packetsIn: 2, copiesOut: 1, dropsByReason: { [DROP_INGRESS_FAULT_LOSS]: 1 } });
    });

    it('a packet duplicated on the way in is decided twice (an egress duplicate is decided once)', () => {
      const ingress = setup({ faults: { rules: [{ direction: 'ingress', duplicate: 1 }] } });
      ingress.dataplane.handle(packet({ dst: 2 }), 1);
      expect(ingress.out.map((o) => o.machine)).toStrictEqual([2, 2]);
      expect(ingress.sw.counters().packets).toBe(2);
      const egress = setup({ faults: { rules: [{ duplicate: 1 }] } });
      egress.dataplane.handle(packet({ dst: 2 }), 1);
      expect(egress.out.map((o) => o.machine)).toStrictEqual([2, 2]);
      expect(egress.sw.counters().packets).toBe(1);
    });

    it('a packet delayed on the way in is decided when it arrives, behind the packets sent after it', () => {
      const { dataplane, out, timers, sw } = setup({ faults: { rules: [{ direction: 'ingress', packetTypes: ['acquire'], delay: 1, delayNsMin: 2_000_000, delayNsMax: 2_000_000 }] } });
      dataplane.handle(packet({ type: 'acquire', dst: 2, seq: 1 }), 1);
      dataplane.handle(packet({ type: 'release', dst: 2, seq: 2 }), 1);
      expect(sw.counters().packets).toBe(1);
      expect(dataplane.stats().delayedInFlight).toBe(1);
      timers.advance(2);
      expect(out.map((o) => o.packet.seq)).toStrictEqual([2, 1]);
      expect(sw.counters().packets).toBe(2);
      expect(dataplane.stats().delayedInFlight).toBe(0);
    });

    it('selects the sender: a rule for machine 3 leaves machine 1\'s packets alone', () => {
      const { dataplane, out } = setup({ faults: { rules: [{ direction: 'ingress', machines: [3], loss: 1 }] } });
      dataplane.handle(packet({ dst: 2, seq: 1 }), 1);
      dataplane.handle(packet({ dst: 2, seq: 2 }), 3);
      expect(out.map((o) => o.packet.seq)).toStrictEqual([1]);
    });

    it('bounds the held ingress packets, drops them at a recovery close, and ingests them on drain', () => {
      const rules = { rules: [{ direction: 'ingress' as const, delay: 1, delayNsMin: 1e9, delayNsMax: 1e9 }] };
      const bounded = setup({ faults: rules, maxDelayedPackets: 1 });
      bounded.dataplane.handle(packet({ dst: 2, seq: 1 }), 1);
      bounded.dataplane.handle(packet({ dst: 2, seq: 2 }), 1);
      expect(bounded.dataplane.stats()).toMatchObject({ delayedInFlight: 1, dropsByReason: { 'delay-overflow': 1 } });
      expect(bounded.dataplane.discardDelayed()).toBe(1);
      expect(bounded.dataplane.stats().dropsByReason[DROP_RECOVERY_CLOSED]).toBe(1);
      bounded.timers.advance(2_000);
      expect(bounded.out).toStrictEqual([]);
      expect(bounded.sw.counters().packets).toBe(0);

      const drained = setup({ faults: rules });
      drained.dataplane.handle(packet({ dst: 4 }), 1);
      drained.dataplane.drain();
      expect(drained.out.map((o) => o.machine)).toStrictEqual([4]);
    });
  });
});
