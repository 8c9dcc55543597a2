import { describe, expect, it } from 'vitest';
import { BoundedSet } from './bounded-set.js';

describe('BoundedSet', () => {
  it('never holds more than max members and forgets the oldest first, counting each', () => {
    const set = new BoundedSet<number>(3);
    for (let i = 1; i <= 5; i++) set.add(i);
    expect(set.size).toBe(3);
    expect([1, 2, 3, 4, 5].map((i) => set.has(i))).toEqual([false, false, true, true, true]);
    expect(set.evicted).toBe(2);
  });

  it('a member added again is the newest; delete frees its place', () => {
    const set = new BoundedSet<string>(2);
    set.add('a');
    set.add('b');
    set.add('a');
    set.add('c');
    expect(set.has('a')).toBe(true);
    expect(set.has('b')).toBe(false);
    expect(set.delete('a')).toBe(true);
    set.add('d');
    expect(set.size).toBe(2);
    expect(set.evicted).toBe(1);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new BoundedSet(0)).toThrow(RangeError);
  });
});
