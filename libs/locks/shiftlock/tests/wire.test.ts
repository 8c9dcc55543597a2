import type { Message } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { MAX_CLIENT, MessageType, decodeMessage, decodeTail, encodeMessage, encodeTail, nextGeneration, tailAddress } from '../src/index.js';

describe('TailPtr: 16-bit node id + 24-bit endpoint number (spec §2.3)', () => {
  it('round-trips node, client, slot and generation; node 0 is representable and no TailPtr is 0', () => {
    for (const endpoint of [
      { node: 0, client: 0, slot: 0, generation: 1 },
      { node: 3, client: 17, slot: 15, generation: 255 },
      { node: 0xfffe, client: MAX_CLIENT, slot: 7, generation: 9 },
    ]) {
      const tail = encodeTail(endpoint);
      expect(tail).toBeGreaterThan(0n);
      expect(tail < 1n << 40n).toBe(true);
      expect(decodeTail(tail)).toEqual(endpoint);
      expect(tailAddress(tail)).toEqual({ node: endpoint.node, client: endpoint.client });
    }
    expect(encodeTail({ node: 2, client: 5, slot: 1, generation: 3 })).toBe(3n | (BigInt((5 << 12) | (1 << 8) | 3) << 16n));
  });

  it('refuses what does not fit, and never decodes the null pointer', () => {
    expect(() => encodeTail({ node: 0xffff, client: 0, slot: 0, generation: 1 })).toThrow(RangeError);
    expect(() => encodeTail({ node: 0, client: MAX_CLIENT + 1, slot: 0, generation: 1 })).toThrow(RangeError);
    expect(() => encodeTail({ node: 0, client: 0, slot: 16, generation: 1 })).toThrow(RangeError);
    expect(() => encodeTail({ node: 0, client: 0, slot: 0, generation: 0 })).toThrow(RangeError);
    expect(() => decodeTail(0n)).toThrow(RangeError);
  });

  it('generations cycle 1..255, skipping 0', () => {
    expect(nextGeneration(0)).toBe(1);
    expect(nextGeneration(254)).toBe(255);
    expect(nextGeneration(255)).toBe(1);
  });
});

describe('messages on the Mailbox (spec §2.4)', () => {
  const from = { node: 1, client: 2 };
  it('round-trip with their kind, value, epoch, count, endpoints and trace context', () => {
    const trace = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 };
    const outgoing = { type: MessageType.handover, to: { node: 2, client: 3 }, lock: 9, value: (1n << 64n) - 1n, epoch: 1n, count: 15, target: 0xab_cdef_0123n, sender: 0x12_3456_789an, trace };
    const wire = encodeMessage(outgoing);
    expect(wire.kind).toBe('handover');
    const decoded = decodeMessage({ ...wire, from } as Message);
    expect(decoded).toEqual({ type: MessageType.handover, from, lock: 9, value: outgoing.value, epoch: 1n, count: 15, target: outgoing.target, sender: outgoing.sender, trace });
    expect(encodeMessage({ ...outgoing, type: MessageType.successor }).kind).toBe('custom');
    expect(encodeMessage({ ...outgoing, type: MessageType.modeChanged }).kind).toBe('mode-change');
    expect(encodeMessage({ ...outgoing, type: MessageType.recover }).kind).toBe('reset');
  });

  it('ignores foreign or malformed messages', () => {
    const base: Message = { kind: 'handover', from, to: from, lock: 0, value: 1n, data: new Uint8Array(24) };
    expect(decodeMessage(base)).toBeUndefined(); // type byte 0
    const data = new Uint8Array(24);
    data[0] = MessageType.handover;
    expect(decodeMessage({ ...base, data })).toBeDefined();
    expect(decodeMessage({ ...base, data, kind: 'grant' })).toBeUndefined(); // kind does not match the type
    expect(decodeMessage({ ...base, data: data.slice(0, 20) })).toBeUndefined();
    const { value: _value, ...noValue } = base;
    expect(decodeMessage({ ...noValue, data })).toBeUndefined();
  });
});
