import { describe, expect, it } from 'vitest';
import { TestRandom } from '../tests/support/seeded-random.js';
import { createKeyChooser, createModeChooser } from './key-chooser.js';

describe('createKeyChooser', () => {
  it('draws uniform ids in range', () => {
    const chooser = createKeyChooser({ locks: 10, distribution: 'uniform', seed: 1 }, new TestRandom(1));
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) counts[chooser.next()]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });

  it('draws zipf ids with lock 0 hottest, and agrees on the scrambled hot lock across clients', () => {
    const zipf = createKeyChooser({ locks: 1000, distribution: { zipf: 1.2 }, seed: 1 }, new TestRandom(2));
    let zeros = 0;
    for (let i = 0; i < 10_000; i++) if (zipf.next() === 0) zeros++;
    // P(rank 1) at θ = 1.2 over 1000 items is about 0.23.
    expect(zeros).toBeGreaterThan(2000);
    expect(zeros).toBeLessThan(2700);

    const hottest = (clientSeed: number) => {
      const chooser = createKeyChooser({ locks: 1000, distribution: { zipf: 1.2, scrambled: true }, seed: 99 }, new TestRandom(clientSeed));
      const counts = new Map<number, number>();
      for (let i = 0; i < 5000; i++) {
        const id = chooser.next();
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    };
    expect(hottest(3)).toBe(hottest(4));
    expect(hottest(3)).not.toBe(0);
  });
});

describe('createModeChooser', () => {
  it('gives shared with probability readRatio', () => {
    const random = new TestRandom(5);
    const chooser = createModeChooser(0.3, random);
    let shared = 0;
    for (let i = 0; i < 10_000; i++) if (chooser.next() === 'shared') shared++;
    expect(shared / 10_000).toBeGreaterThan(0.28);
    expect(shared / 10_000).toBeLessThan(0.32);
    expect(createModeChooser(0, random).next()).toBe('exclusive');
    expect(createModeChooser(1, random).next()).toBe('shared');
    expect(() => createModeChooser(1.1, random)).toThrow(RangeError);
  });
});
