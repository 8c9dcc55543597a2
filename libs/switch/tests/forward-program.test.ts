import { describe, expect, it } from 'vitest';
import { FORWARD_DECISION_COUNTER, FORWARD_TYPE_COUNTER, PACKET_TYPES, Switch, SwitchControlError, forwardProgram } from '../src/index.js';
import { packet } from './support/packets.js';

describe('forwardProgram', () => {
  it('unicasts to dst', () => {
    const sw = new Switch(forwardProgram());
    const p = packet({ type: 'grant', dst: 4 });
    expect(sw.ingest(p, 1)).toEqual([{ kind: 'unicast', machine: 4, packet: p }]);
  });

  it('drops a packet without dst, with a reason', () => {
    const sw = new Switch(forwardProgram());
    expect(sw.ingest(packet({ type: 'acquire' }), 1)).toEqual([{ kind: 'drop', reason: 'no-dst' }]);
    expect(sw.counters().dropsByReason).toEqual({ 'no-dst': 1 });
  });

  it('counts packets by type and by decision in its registers', () => {
    const program = forwardProgram();
    const sw = new Switch(program);
    sw.ingest(packet({ type: 'acquire', dst: 2 }), 1);
    sw.ingest(packet({ type: 'acquire', dst: 3 }), 1);
    sw.ingest(packet({ type: 'release' }), 1);
    sw.ingest(packet({ type: 'grant', dst: 1 }), 2);
    const counts = program.counts();
    expect(counts.byType).toMatchObject({ acquire: 2, release: 1, grant: 1, free: 0 });
    expect(Object.keys(counts.byType)).toEqual([...PACKET_TYPES]);
    expect(counts.byDecision).toEqual({ routed: 3, 'no-dst': 1 });
    expect(sw.readRegister(FORWARD_TYPE_COUNTER, PACKET_TYPES.indexOf('acquire'))).toBe(2);
    expect([...sw.readRegisters(FORWARD_DECISION_COUNTER, 0, 2)]).toEqual([3, 1]);
    const counters = sw.counters();
    expect(counters.decisions).toEqual({ routed: 3, 'no-dst': 1 });
    expect(counters.packetsByType).toEqual({ acquire: 2, release: 1, grant: 1 });
    expect(counters.egress).toEqual({ unicast: 3, multicast: 0, drop: 1, bounce: 0 });
  });

  it('wraps its 32-bit counters like the hardware', () => {
    const program = forwardProgram();
    const sw = new Switch(program);
    sw.writeRegister(FORWARD_DECISION_COUNTER, 0, 0xffff_ffff);
    sw.ingest(packet({ dst: 1 }), 1);
    expect(program.counts().byDecision.routed).toBe(0);
  });

  it('refuses to report counts before it is built', () => {
    expect(() => forwardProgram().counts()).toThrow(SwitchControlError);
  });
});
