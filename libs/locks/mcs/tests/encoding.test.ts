import { describe, expect, it } from 'vitest';
import { GRANT_MARK, decodeHandover, decodePointer, encodeHandover, encodePointer, isOccupied, queueNodesPerSlot } from '../src/index.js';

describe('mcs tail word and pointers', () => {
  it('packs occupied, node and endpoint (client · 16 + queue node; the artifact has one node per client)', () => {
    const word = encodePointer({ node: 3, client: 5, index: 1 });
    expect(word).toBe(1n | (3n << 16n) | (81n << 32n));
    expect(isOccupied(word)).toBe(true);
    expect(decodePointer(word)).toEqual({ node: 3, client: 5, index: 1 });
    expect(decodePointer(0n)).toBeUndefined();
  });

  it('refuses what a pointer cannot name', () => {
    expect(() => encodePointer({ node: 70_000, client: 0, index: 0 })).toThrow(RangeError);
    expect(() => encodePointer({ node: 0, client: 2 ** 28, index: 0 })).toThrow(RangeError);
    expect(() => encodePointer({ node: 0, client: 0, index: 16 })).toThrow(RangeError);
  });

  it('fits sixteen 32-byte queue nodes in a 512-byte descriptor slot, one per lock of a 2PL transaction', () => {
    expect(queueNodesPerSlot(512)).toBe(16);
    expect(queueNodesPerSlot(1024)).toBe(16);
    expect(queueNodesPerSlot(64)).toBe(2);
    expect(queueNodesPerSlot(16)).toBe(0);
  });
});

describe('mcs handover payload', () => {
  const words = (bytes: Uint8Array) => {
    const view = new DataView(bytes.buffer);
    return [view.getBigUint64(0, true), view.getBigUint64(8, true), view.getBigUint64(16, true)] as const;
  };

  it('carries the handover span context with the grant, flags read back as sampled', () => {
    const context = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
    const [high, low, grant] = words(encodeHandover(context));
    expect(grant).toBe(0xb7ad6b7169203331n);
    expect(decodeHandover(high, low, grant)).toEqual(context);
  });

  it('grants with a bare mark when there is no (valid) context, and links nothing then', () => {
    for (const context of [undefined, { traceId: 'nothex', spanId: 'b7ad6b7169203331', traceFlags: 1 }, { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: '0000000000000000', traceFlags: 1 }]) {
      const [high, low, grant] = words(encodeHandover(context));
      expect([high, low, grant]).toEqual([0n, 0n, GRANT_MARK]);
      expect(decodeHandover(high, low, grant)).toBeUndefined();
    }
  });
});
