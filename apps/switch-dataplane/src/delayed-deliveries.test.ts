import { describe, expect, it } from 'vitest';
import { ManualTimers } from '../tests/support.js';
import { DelayedDeliveries } from './delayed-deliveries.js';

describe('DelayedDeliveries', () => {
  it('delivers each item after its own delay, so a shorter delay overtakes a longer one', () => {
    const timers = new ManualTimers();
    const out: string[] = [];
    const queue = new DelayedDeliveries<string>(10, (item) => out.push(item), timers);
    expect(queue.schedule('slow', 3_000_000)).toBe(true);
    expect(queue.schedule('fast', 1_000_000)).toBe(true);
    expect(queue.inFlight).toBe(2);
    timers.advance(1);
    expect(out).toStrictEqual(['fast']);
    timers.advance(2);
    expect(out).toStrictEqual(['fast', 'slow']);
    expect(queue.inFlight).toBe(0);
  });

  it('refuses items beyond its bound and accepts again once one left', () => {
    const timers = new ManualTimers();
    const out: number[] = [];
    const queue = new DelayedDeliveries<number>(2, (item) => out.push(item), timers);
    expect([queue.schedule(1, 1e6), queue.schedule(2, 1e6), queue.schedule(3, 1e6)]).toStrictEqual([true, true, false]);
    timers.advance(1);
    expect(out).toStrictEqual([1, 2]);
    expect(queue.schedule(4, 1e6)).toBe(true);
  });

  it('flush delivers everything held now, in scheduling order, and cancels the timers', () => {
    const timers = new ManualTimers();
    const out: number[] = [];
    const queue = new DelayedDeliveries<number>(10, (item) => out.push(item), timers);
    queue.schedule(1, 5e6);
    queue.schedule(2, 1e6);
    queue.flush();
    expect(out).toStrictEqual([1, 2]);
    expect(timers.scheduled).toBe(0);
    timers.advance(10);
    expect(out).toStrictEqual([1, 2]);
  });

  it('discard drops everything held without delivering it and cancels the timers', () => {
    const timers = new ManualTimers();
    const out: number[] = [];
    const queue = new DelayedDeliveries<number>(10, (item) => out.push(item), timers);
    queue.schedule(1, 5e6);
    queue.schedule(2, 1e6);
    expect(queue.discard()).toBe(2);
    expect(queue.inFlight).toBe(0);
    expect(timers.scheduled).toBe(0);
    timers.advance(10);
    expect(out).toStrictEqual([]);
    expect(queue.discard()).toBe(0);
  });

  it('rejects a negative bound', () => {
    expect(() => new DelayedDeliveries<number>(-1, () => undefined)).toThrow(RangeError);
  });
});
