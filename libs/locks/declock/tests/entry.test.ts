import { describe, expect, it } from 'vitest';
import { EMPTY_ENTRY_WORD, VER_INIT, assertEncodableClient, classifyEntry, decodeEntry, encodeEntry } from '../src/index.js';

describe('queue entry (8 bytes: ver 16 | ts 16 | mode 1 | cid 31)', () => {
  it('round-trips every field', () => {
    const entry = { version: 0x1234, ts: 0xbeef, mode: 'exclusive' as const, client: { node: 1023, client: 2_000_000 } };
    expect(decodeEntry(encodeEntry(entry))).toEqual(entry);
    const reader = { version: 0, ts: 0, mode: 'shared' as const, client: { node: 0, client: 0 } };
    expect(decodeEntry(encodeEntry(reader))).toEqual(reader);
  });

  it('zero-filled memory and the reset value both read as version 0xFFFF ("never written")', () => {
    expect(EMPTY_ENTRY_WORD).toBe(0n);
    expect(decodeEntry(0n).version).toBe(VER_INIT);
    // A lap-0 entry is therefore never confused with fresh memory.
    expect(encodeEntry({ version: 0, ts: 0, mode: 'shared', client: { node: 0, client: 0 } })).not.toBe(0n);
  });

  it('classifies entries as valid, obsolete or overwritten (§2.3)', () => {
    const at = (version: number) => decodeEntry(encodeEntry({ version, ts: 0, mode: 'shared', client: { node: 1, client: 1 } }));
    expect(classifyEntry(at(5), 5)).toBe('valid');
    expect(classifyEntry(at(4), 5)).toBe('obsolete'); // read–write race, or a shared holder's old slot
    expect(classifyEntry(decodeEntry(0n), 5)).toBe('obsolete'); // never written
    expect(classifyEntry(at(6), 5)).toBe('overwritten'); // a later lap reused the slot
  });

  it('refuses client addresses the 31-bit cid cannot carry', () => {
    expect(() => assertEncodableClient({ node: 1024, client: 0 })).toThrow(/node ≤ 1023/);
    expect(() => assertEncodableClient({ node: 0, client: 2 ** 21 })).toThrow(/client ≤/);
  });
});
