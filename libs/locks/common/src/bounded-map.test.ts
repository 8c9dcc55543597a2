import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('never holds more than max entries and forgets the oldest first, counting each', () => {
    const map = new BoundedMap<number, string>(3);
    for (let i = 1; i <= 5; i++) map.set(i, `v${i}`);
    expect(map.size).toBe(3);
    expect([1, 2, 3, 4, 5].map((i) => map.get(i))).toEqual([undefined, undefined, 'v3', 'v4', 'v5']);
    expect(map.evicted).toBe(2);
  });

  it('a key set again is the newest; delete frees its place', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    map.set('c', 4);
    expect(map.get('a')).toBe(3);
    expect(map.get('b')).toBeUndefined();
    expect(map.delete('a')).toBe(true);
    map.set('d', 5);
    expect(map.size).toBe(2);
    expect(map.evicted).toBe(1);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new BoundedMap(1.5)).toThrow(RangeError);
  });
});
