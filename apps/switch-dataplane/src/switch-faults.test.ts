import { create } from '@bufbuild/protobuf';
import { ConfigError } from '@lockfabric/ports';
import { SeededRandom } from '@lockfabric/sim';
import { FaultInjector } from '@lockfabric/switch';
import { FaultDirection, FaultSpecSchema, PacketType } from '@lockfabric/wire';
import { describe, expect, it } from 'vitest';
import { faultFromWire } from './fault-spec-wire.js';
import { SwitchFaults } from './switch-faults.js';

const fault = (init: Parameters<typeof create<typeof FaultSpecSchema>>[1]) => faultFromWire(create(FaultSpecSchema, init), 'test');

describe('SwitchFaults', () => {
  it('replaces the whole list, skipping specs without effect', () => {
    const injector = new FaultInjector(new SeededRandom(1));
    const faults = new SwitchFaults(injector);
    faults.replace([fault({ loss: 1 }), fault({ packetType: PacketType.GRANT }), fault({ machine: 2, duplicate: 1 })]);
    expect(faults.active).toBe(2);
    expect(injector.spec.rules).toStrictEqual([{ loss: 1 }, { machines: [2], duplicate: 1 }]);
    faults.replace([]);
    expect(injector.spec.rules).toStrictEqual([]);
  });

  it('upserts by selector and clears a selector with a spec without effect', () => {
    const injector = new FaultInjector(new SeededRandom(1));
    const faults = new SwitchFaults(injector);
    faults.upsert(fault({ loss: 0.5 }));
    faults.upsert(fault({ packetType: PacketType.GRANT, loss: 1 }));
    faults.upsert(fault({ loss: 0.25 }));
    expect(injector.spec.rules).toStrictEqual([{ packetTypes: ['grant'], loss: 1 }, { loss: 0.25 }]);
    faults.upsert(fault({ packetType: PacketType.GRANT }));
    expect(injector.spec.rules).toStrictEqual([{ loss: 0.25 }]);
    expect(faults.active).toBe(1);
  });

  it('keeps an ingress rule and an egress rule of the same type and machine apart', () => {
    const injector = new FaultInjector(new SeededRandom(1));
    const faults = new SwitchFaults(injector);
    faults.upsert(fault({ packetType: PacketType.ACQUIRE, loss: 1 }));
    faults.upsert(fault({ packetType: PacketType.ACQUIRE, direction: FaultDirection.INGRESS, duplicate: 1 }));
    expect(injector.spec.rules).toStrictEqual([
      { packetTypes: ['acquire'], loss: 1 },
      { direction: 'ingress', packetTypes: ['acquire'], duplicate: 1 },
    ]);
    expect(injector.hasIngressRules).toBe(true);
    faults.upsert(fault({ packetType: PacketType.ACQUIRE, direction: FaultDirection.INGRESS }));
    expect(injector.spec.rules).toStrictEqual([{ packetTypes: ['acquire'], loss: 1 }]);
    expect(injector.hasIngressRules).toBe(false);
  });

  it('keeps the rules in force when the injector rejects a change', () => {
    const injector = new FaultInjector(new SeededRandom(1));
    const faults = new SwitchFaults(injector);
    faults.upsert(fault({ loss: 1 }));
    // a zero reorder window is a rule the injector refuses
    const bad = faultFromWire(create(FaultSpecSchema, { reorder: 0.5 }), 'test', 0);
    expect(() => faults.upsert(bad)).toThrow(ConfigError);
    expect(faults.rules()).toStrictEqual([{ loss: 1 }]);
    expect(injector.spec.rules).toStrictEqual([{ loss: 1 }]);
  });
});
