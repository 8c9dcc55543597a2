import { describe, expect, it } from 'vitest';
import { RealClock } from './real-clock.js';

describe('RealClock.sleep', () => {
  it('never resolves before its duration has passed on the clock itself (timers can fire a fraction of a ms early)', async () => {
    const clock = new RealClock();
    const early: number[] = [];
    // Durations that are not whole milliseconds, where a millisecond timer is most likely early.
    for (let i = 0; i < 120; i++) {
      const ns = 300_000 + ((i * 7_919) % 40) * 97_000;
      const untilNs = clock.nowNs() + ns;
      await clock.sleep(ns);
      const leftNs = untilNs - clock.nowNs();
      if (leftNs > 0) early.push(leftNs);
    }
    expect(early).toStrictEqual([]);
  });

  it('rejects with the signal reason when aborted', async () => {
    const clock = new RealClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(10_000_000_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(sleeping).rejects.toThrow('stop');
  });
});
