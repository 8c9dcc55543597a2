import { describe, expect, it } from 'vitest';
import { KeyedMutex } from './keyed-mutex.js';

describe('KeyedMutex', () => {
  it('runs holders of one key one at a time in arrival order, and forgets drained keys', async () => {
    const mutex = new KeyedMutex<string>();
    const log: string[] = [];
    const body = (name: string) => async () => {
      log.push(`${name}+`);
      await Promise.resolve();
      await Promise.resolve();
      log.push(`${name}-`);
    };
    await Promise.all([mutex.run('a', body('a1')), mutex.run('a', body('a2')), mutex.run('b', body('b1'))]);
    expect(log.indexOf('a1-')).toBeLessThan(log.indexOf('a2+'));
    expect(log.indexOf('b1+')).toBeLessThan(log.indexOf('a1-')); // other keys run alongside
    expect(mutex.size).toBe(0);
  });

  it('releases the key when the body throws', async () => {
    const mutex = new KeyedMutex<number>();
    await expect(mutex.run(1, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await mutex.run(1, async () => 5)).toBe(5);
    expect(mutex.size).toBe(0);
  });
});
