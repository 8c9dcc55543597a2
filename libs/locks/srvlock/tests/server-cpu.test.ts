import { describe, expect, it } from 'vitest';
import { SchedulerClock, VirtualScheduler } from '@lockfabric/sim';
import { ServerCpu } from '../src/index.js';

/** Admits `count` requests at time 0; returns when each was served (virtual ns) and the CPU's counters. */
async function serve(count: number, threads: number, queueBound: number) {
  const scheduler = new VirtualScheduler();
  const clock = new SchedulerClock(scheduler);
  const cpu = new ServerCpu(clock, { requestNs: 100, threads, queueBound }, new AbortController().signal);
  const servedAt: number[] = [];
  const admitted = Array.from({ length: count }, () => cpu.admit(() => servedAt.push(clock.nowNs())));
  await scheduler.run();
  return { servedAt, admitted, stats: cpu.stats };
}

describe('ServerCpu (the two-sided baselines\' server CPU model)', () => {
  it('one thread serves requests one after another, FIFO, requestNs each', async () => {
    const { servedAt, stats } = await serve(4, 1, 100);
    expect(servedAt).toEqual([100, 200, 300, 400]);
    expect(stats).toEqual({ served: 4, dropped: 0, maxQueued: 4 });
  });

  it('N threads serve N requests at a time', async () => {
    const { servedAt } = await serve(5, 2, 100);
    expect(servedAt).toEqual([100, 100, 200, 200, 300]);
  });

  it('the queue is bounded: requests beyond queueBound are dropped and counted', async () => {
    const { servedAt, admitted, stats } = await serve(10, 1, 3);
    expect(admitted).toEqual([true, true, true, false, false, false, false, false, false, false]);
    expect(servedAt).toHaveLength(3);
    expect(stats).toEqual({ served: 3, dropped: 7, maxQueued: 3 });
  });

  it('rejects a configuration without threads', () => {
    const clock = new SchedulerClock(new VirtualScheduler());
    expect(() => new ServerCpu(clock, { requestNs: 1, threads: 0, queueBound: 1 }, new AbortController().signal)).toThrow(RangeError);
  });
});
