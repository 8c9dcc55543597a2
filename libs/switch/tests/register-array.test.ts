import { describe, expect, it } from 'vitest';
import { RegisterAccessError, RegisterArray, REGISTER_WIDTHS, SwitchProgramError } from '../src/index.js';
import type { RegisterWidth } from '../src/index.js';

const maxOf = (width: RegisterWidth) => (width === 32 ? 0xffff_ffff : 2 ** width - 1);

describe('RegisterArray', () => {
  it('packs a million 1-bit elements into 125 000 bytes', () => {
    const array = new RegisterArray({ name: 'free', width: 1, length: 1_000_000 });
    expect(array.sizeBits).toBe(1_000_000);
    expect(array.storageBytes).toBe(125_000);
  });

  it('reports size as width × length at every width', () => {
    for (const width of REGISTER_WIDTHS) {
      const array = new RegisterArray({ name: `w${width}`, width, length: 1000 });
      expect(array.sizeBits).toBe(width * 1000);
      expect(array.storageBytes).toBe(Math.ceil((width * 1000) / 32) * 4);
    }
  });

  it.each(REGISTER_WIDTHS)('round-trips distinct values at width %i, including across word boundaries', (width) => {
    const length = 200; // several 32-bit words at every width
    const array = new RegisterArray({ name: 'a', width, length });
    const max = maxOf(width);
    const valueAt = (i: number) => (i % 3 === 0 ? max : (i * 2_654_435_761) % (max + 1));
    for (let i = 0; i < length; i++) array.set(i, valueAt(i));
    for (let i = 0; i < length; i++) expect(array.get(i)).toBe(valueAt(i));
  });

  it.each(REGISTER_WIDTHS)('writes at width %i touch only their own element at word edges', (width) => {
    const perWord = 32 / width;
    const array = new RegisterArray({ name: 'a', width, length: perWord * 3 });
    const max = maxOf(width);
    // last element of word 0, first of word 1, last of word 1, first of word 2
    const edges = [perWord - 1, perWord, 2 * perWord - 1, 2 * perWord].filter((i, k, all) => all.indexOf(i) === k);
    for (const i of edges) {
      array.fill(0);
      array.set(i, max);
      for (let j = 0; j < array.length; j++) expect(array.get(j)).toBe(j === i ? max : 0);
      array.fill(max);
      array.set(i, 0);
      for (let j = 0; j < array.length; j++) expect(array.get(j)).toBe(j === i ? 0 : max);
    }
  });

  it('keeps 32-bit values unsigned', () => {
    const array = new RegisterArray({ name: 'c', width: 32, length: 2 });
    array.set(1, 0xffff_ffff);
    expect(array.get(1)).toBe(4_294_967_295);
    expect(array.get(0)).toBe(0);
  });

  it('rejects indexes outside the array and values that do not fit', () => {
    const array = new RegisterArray({ name: 'mid', width: 8, length: 10 });
    for (const index of [-1, 10, 1.5, Number.NaN]) expect(() => array.get(index)).toThrow(RegisterAccessError);
    expect(() => array.set(10, 1)).toThrow(/index 10 is outside \[0, 10\)/);
    for (const value of [256, -1, 0.5]) expect(() => array.set(0, value)).toThrow(RegisterAccessError);
    expect(() => new RegisterArray({ name: 'b', width: 1, length: 4 }).set(0, 2)).toThrow(/does not fit 1 bits/);
  });

  it('rejects unsupported widths and lengths', () => {
    expect(() => new RegisterArray({ name: 'x', width: 4 as RegisterWidth, length: 8 })).toThrow(SwitchProgramError);
    expect(() => new RegisterArray({ name: 'x', width: 8, length: 0 })).toThrow(/positive integer/);
    expect(() => new RegisterArray({ name: 'x', width: 8, length: 4, initial: 300 })).toThrow(RegisterAccessError);
  });

  it('reads, writes and fills ranges; a bad value in a range writes nothing', () => {
    const array = new RegisterArray({ name: 'inca', width: 8, length: 100 });
    array.writeRange(30, [1, 2, 3, 255]);
    expect([...array.readRange(29, 6)]).toEqual([0, 1, 2, 3, 255, 0]);
    expect(() => array.writeRange(40, [1, 2, 999])).toThrow(RegisterAccessError);
    expect([...array.readRange(40, 3)]).toEqual([0, 0, 0]);
    expect(() => array.readRange(98, 3)).toThrow(RegisterAccessError);
    array.fill(7, 10, 20);
    expect(array.get(9)).toBe(0);
    expect(array.get(10)).toBe(7);
    expect(array.get(19)).toBe(7);
    expect(array.get(20)).toBe(0);
  });

  it('starts at and resets to its initial value', () => {
    const free = new RegisterArray({ name: 'free', width: 1, length: 70, initial: 1 });
    expect([...free.readRange(0, 70)].every((bit) => bit === 1)).toBe(true);
    free.set(33, 0);
    free.reset();
    expect(free.get(33)).toBe(1);
    const wide = new RegisterArray({ name: 'w', width: 16, length: 5, initial: 0xbeef });
    expect([...wide.readRange(0, 5)]).toEqual(Array(5).fill(0xbeef));
  });
});
