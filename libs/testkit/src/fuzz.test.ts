import { MalformedInputError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { bytesTarget, fc, footprint, fuzzDecoder, FuzzFailure } from './fuzz.js';

/** A tiny length-prefixed format: [length byte-varint][payload]. The correct decoder checks bounds. */
function readVarint(bytes: Uint8Array): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < Math.min(bytes.length, 5); i++) {
    const b = bytes[i] ?? 0;
    value += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new MalformedInputError('test', 'bad varint');
}

function decodeChecked(bytes: Uint8Array): Uint8Array {
  const { value, next } = readVarint(bytes);
  if (next + value > bytes.length) throw new MalformedInputError('test', 'length beyond frame');
  return bytes.slice(next, next + value);
}

/** Mutant: trusts the length prefix and allocates it. */
function decodeTrustingLength(bytes: Uint8Array): Uint8Array {
  const { value, next } = readVarint(bytes);
  const out = new Uint8Array(Math.min(value, 1 << 20));
  out.set(bytes.subarray(next, next + Math.min(value, 1 << 20)));
  return out;
}

/** Mutant: lets a plain RangeError escape on truncation instead of a typed error. */
function decodeUntyped(bytes: Uint8Array): Uint8Array {
  const { value, next } = readVarint(bytes);
  if (next + value > bytes.length) throw new RangeError('offset out of range');
  return bytes.slice(next, next + value);
}

const valid = fc.uint8Array({ maxLength: 40 }).map((payload) => Uint8Array.of(payload.length, ...payload));

describe('fuzzDecoder', () => {
  it('passes a decoder that checks its bounds', () => {
    expect(fuzzDecoder(bytesTarget('checked', decodeChecked, valid), { runs: 300, seed: 1 }).runs).toBe(300);
  });

  it('catches a decoder that allocates what a length field says (mutant)', () => {
    expect(() => fuzzDecoder(bytesTarget('trusting', decodeTrustingLength, valid), { runs: 300, seed: 1 })).toThrow(/output footprint/);
  });

  it('catches a decoder that throws an untyped exception (mutant), with seed and shrunk input', () => {
    let failure: unknown;
    try {
      fuzzDecoder(bytesTarget('untyped', decodeUntyped, valid), { runs: 300, seed: 7 });
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(FuzzFailure);
    const f = failure as FuzzFailure;
    expect(f.message).toMatch(/untyped exception RangeError/);
    expect(f.seed).toBe(7);
    expect(f.counterexample).toBeInstanceOf(Uint8Array);
  });

  it('counts only variable-size content in the footprint', () => {
    expect(footprint({ a: 1, b: 'abc', c: [Uint8Array.of(1, 2)], d: new Map([['k', 'vv']]) })).toBe(3 + 1 + 2 + 1 + 1 + 2);
  });
});
