import { describe, expect, it } from 'vitest';
import { MatchTable, SwitchControlError } from '../src/index.js';

describe('MatchTable', () => {
  it('matches exact keys and half-open ranges, exact first', () => {
    const table = new MatchTable<number>('route');
    table.setRange(0, 1000, 1);
    table.setRange(1000, Infinity, 2);
    table.setEntry(5, 9);
    expect(table.lookup(5)).toBe(9);
    expect(table.lookup(0)).toBe(1);
    expect(table.lookup(999)).toBe(1);
    expect(table.lookup(1000)).toBe(2);
    expect(table.lookup(5_000_000)).toBe(2);
    expect(table.size).toBe(3);
  });

  it('misses keys outside every range', () => {
    const table = new MatchTable<number>('route');
    table.setRange(10, 20, 1);
    table.setRange(30, 40, 2);
    expect([9, 20, 25, 40].map((k) => table.lookup(k))).toEqual([undefined, undefined, undefined, undefined]);
    expect([10, 19, 30, 39].map((k) => table.lookup(k))).toEqual([1, 1, 2, 2]);
  });

  it('refuses overlapping and empty ranges', () => {
    const table = new MatchTable<number>('route');
    table.setRange(10, 20, 1);
    table.setRange(30, 40, 2);
    expect(() => table.setRange(19, 25, 3)).toThrow(/overlaps installed range \[10, 20\)/);
    expect(() => table.setRange(25, 31, 3)).toThrow(/overlaps installed range \[30, 40\)/);
    expect(() => table.setRange(0, 100, 3)).toThrow(SwitchControlError);
    expect(() => table.setRange(5, 5, 3)).toThrow(/empty/);
    table.setRange(20, 30, 3); // exactly fills the gap
    expect(table.lookup(25)).toBe(3);
  });

  it('deletes entries and ranges', () => {
    const table = new MatchTable<number>('route');
    table.setEntry(1, 1);
    table.setRange(10, 20, 2);
    expect(table.deleteEntry(1)).toBe(true);
    expect(table.deleteEntry(1)).toBe(false);
    expect(table.deleteRange(10, 19)).toBe(false);
    expect(table.deleteRange(10, 20)).toBe(true);
    expect(table.lookup(15)).toBeUndefined();
    expect(() => table.setEntry(-1, 0)).toThrow(SwitchControlError);
  });

  it('validates control-plane values with its parser', () => {
    const table = new MatchTable('port', {
      parse: (value) => {
        if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error('port must be an integer');
        return value;
      },
    });
    expect(table.accept(3)).toBe(3);
    expect(() => table.accept('3')).toThrow(/table 'port' refuses value "3": port must be an integer/);
  });
});
