import { create } from '@bufbuild/protobuf';
import { MalformedInputError } from '@lockfabric/ports';
import { FaultDirection, FaultSpecSchema, PacketType } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REORDER_WINDOW_NS, MAX_FAULT_DELAY_NS, faultFromWire, faultTargetsRack } from './fault-spec-wire.js';

const spec = (init: Parameters<typeof create<typeof FaultSpecSchema>>[1]) => create(FaultSpecSchema, init);

describe('faultFromWire', () => {
  it('maps loss on every packet type and machine to a rule without selectors', () => {
    const fault = faultFromWire(spec({ loss: 1 }), 'test');
    expect(fault).toStrictEqual({ selector: {}, key: '*/*', rule: { loss: 1 } });
  });

  it('narrows to a packet type and an egress machine', () => {
    const fault = faultFromWire(spec({ packetType: PacketType.GRANT, machine: 3, duplicate: 0.5 }), 'test');
    expect(fault.key).toBe('grant/3');
    expect(fault.rule).toStrictEqual({ packetTypes: ['grant'], machines: [3], duplicate: 0.5 });
  });

  it('turns delay_ns into a certain delay and reorder into a bounded random hold-back', () => {
    expect(faultFromWire(spec({ delayNs: 2_000_000n }), 'test').rule).toStrictEqual({ delay: 1, delayNsMin: 2_000_000, delayNsMax: 2_000_000 });
    expect(faultFromWire(spec({ reorder: 0.25 }), 'test').rule).toStrictEqual({ reorder: 0.25, reorderNsMax: DEFAULT_REORDER_WINDOW_NS });
    expect(faultFromWire(spec({ reorder: 0.25 }), 'test', 5_000).rule).toStrictEqual({ reorder: 0.25, reorderNsMax: 5_000 });
  });

  it('keeps a spec without direction (or EGRESS) an egress rule, under the selector key it always had', () => {
    expect(faultFromWire(spec({ packetType: PacketType.ACQUIRE, loss: 1 }), 'test')).toStrictEqual({ selector: { packetType: 'acquire' }, key: 'acquire/*', rule: { packetTypes: ['acquire'], loss: 1 } });
    expect(faultFromWire(spec({ direction: FaultDirection.EGRESS, loss: 1 }), 'test')).toStrictEqual({ selector: {}, key: '*/*', rule: { loss: 1 } });
  });

  it('maps INGRESS and BOTH onto rules of that direction, with a selector of their own', () => {
    const ingress = faultFromWire(spec({ direction: FaultDirection.INGRESS, packetType: PacketType.ACQUIRE, machine: 2, loss: 1 }), 'test');
    expect(ingress).toStrictEqual({
      selector: { packetType: 'acquire', machine: 2, direction: 'ingress' },
      key: 'ingress:acquire/2',
      rule: { direction: 'ingress', packetTypes: ['acquire'], machines: [2], loss: 1 },
    });
    expect(faultFromWire(spec({ direction: FaultDirection.BOTH, duplicate: 1 }), 'test')).toMatchObject({ key: 'both:*/*', rule: { direction: 'both', duplicate: 1 } });
    expect(faultFromWire(spec({ direction: FaultDirection.INGRESS }), 'test')).toMatchObject({ key: 'ingress:*/*', rule: undefined });
  });

  it('turns delay_ns … delay_max_ns into a uniform delay range', () => {
    expect(faultFromWire(spec({ delayNs: 1_000n, delayMaxNs: 5_000n }), 'test').rule).toStrictEqual({ delay: 1, delayNsMin: 1_000, delayNsMax: 5_000 });
    expect(faultFromWire(spec({ delayMaxNs: 5_000n }), 'test').rule).toStrictEqual({ delay: 1, delayNsMin: 0, delayNsMax: 5_000 });
    expect(faultFromWire(spec({ delayNs: 5_000n, delayMaxNs: 5_000n }), 'test').rule).toStrictEqual({ delay: 1, delayNsMin: 5_000, delayNsMax: 5_000 });
  });

  it('reports a spec without effect as one that clears its selector', () => {
    expect(faultFromWire(spec({ packetType: PacketType.ACQUIRE }), 'test')).toStrictEqual({ selector: { packetType: 'acquire' }, key: 'acquire/*', rule: undefined });
  });

  it.each([
    ['a probability above 1', { loss: 1.5 }, /loss must be a probability/],
    ['a negative probability', { duplicate: -0.1 }, /duplicate must be a probability/],
    ['NaN', { reorder: Number.NaN }, /reorder must be a probability/],
    ['a negative delay', { delayNs: -1n }, /delay_ns must be in/],
    ['an overlong delay', { delayNs: BigInt(MAX_FAULT_DELAY_NS) + 1n }, /delay_ns must be in/],
    ['an unknown packet type', { packetType: 99 as PacketType, loss: 1 }, /packet type 99/],
    ['a delay range upside down', { delayNs: 5_000n, delayMaxNs: 1_000n }, /delay_max_ns must be 0 \(a fixed delay\) or in \[delay_ns/],
    ['an overlong delay range', { delayMaxNs: BigInt(MAX_FAULT_DELAY_NS) + 1n }, /delay_max_ns must be/],
    ['an unknown direction', { direction: 7 as FaultDirection, loss: 1 }, /direction 7 is not a fault direction/],
  ])('rejects %s as malformed input', (_what, init, message) => {
    expect(() => faultFromWire(spec(init), 'ctl.fault.switch')).toThrow(MalformedInputError);
    expect(() => faultFromWire(spec(init), 'ctl.fault.switch')).toThrow(message);
  });
});

describe('faultTargetsRack', () => {
  it('addresses every switch with an empty target or *, and one switch by its rack id', () => {
    expect(faultTargetsRack('', 2)).toBe(true);
    expect(faultTargetsRack('*', 2)).toBe(true);
    expect(faultTargetsRack('2', 2)).toBe(true);
    expect(faultTargetsRack('3', 2)).toBe(false);
    expect(faultTargetsRack('02', 2)).toBe(false);
  });
});
