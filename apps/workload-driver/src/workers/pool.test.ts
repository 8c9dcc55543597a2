import { describe, expect, it } from 'vitest';
import { ConfigError } from '@lockfabric/ports';
import { runSwarmJob } from '../swarm/jobs.js';
import type { SwarmJob } from '../swarm/jobs.js';
import { InJobOrder, WorkerPoolError, runJobs } from './pool.js';
import type { JobCounts } from './pool.js';

/** Feeds results in `arrival` order to a merge; returns what it handed on and its result list. */
function merge(arrival: readonly number[], make: (onResult: (i: number, r: string) => void) => { arrive(i: number, r: string): void; results: string[] }) {
  const handed: string[] = [];
  const m = make((i, r) => handed.push(`${i}:${r}`));
  for (const i of arrival) m.arrive(i, `r${i}`);
  return { handed, results: [...m.results] };
}

/** Mutant for the test below: keeps results in arrival order, as a naive merge of worker replies would. */
class ArrivalOrder {
  readonly results: string[] = [];
  constructor(private readonly onResult: (i: number, r: string) => void) {}
  arrive(i: number, r: string): void {
    this.results.push(r);
    this.onResult(i, r);
  }
}

describe('InJobOrder (the merge of bench --workers and check --workers)', () => {
  const inOrder = merge([0, 1, 2, 3, 4], (on) => new InJobOrder(5, on));

  it('gives the same results, handed on in the same order, whatever order the workers answer in', () => {
    for (const arrival of [[4, 3, 2, 1, 0], [1, 0, 3, 2, 4], [2, 4, 0, 3, 1]]) {
      expect(merge(arrival, (on) => new InJobOrder(5, on))).toEqual(inOrder);
    }
    expect(inOrder.handed).toEqual(['0:r0', '1:r1', '2:r2', '3:r3', '4:r4']);
  });

  it('the same comparison catches the mutant merge that keeps arrival order', () => {
    expect(merge([0, 1, 2, 3, 4], (on) => new ArrivalOrder(on))).toEqual(inOrder);
    expect(merge([1, 0, 3, 2, 4], (on) => new ArrivalOrder(on))).not.toEqual(inOrder);
  });

  it('refuses a result for no job, or a second one for a job', () => {
    const m = new InJobOrder<string>(2, () => {});
    m.arrive(1, 'a');
    expect(() => m.arrive(1, 'b')).toThrow(WorkerPoolError);
    expect(() => m.arrive(2, 'c')).toThrow(WorkerPoolError);
  });
});

describe('runJobs over threads (needs the workload-driver build: the worker runs dist/)', () => {
  const jobs: SwarmJob[] = [1, 2, 3, 4, 5, 6].map((seed) => ({ protocol: 'caslock', seed, options: {} }));

  it('--workers 2 is this thread and one worker, one message per job, and the same results as --workers 1', async () => {
    const one: JobCounts = { inThread: 0, perWorker: [], messages: 0 };
    const two: JobCounts = { inThread: 0, perWorker: [], messages: 0 };
    const alone = await runJobs(jobs, 1, 'swarm', runSwarmJob, undefined, one);
    const order: number[] = [];
    const shared = await runJobs(jobs, 2, 'swarm', runSwarmJob, (i) => order.push(i), two);
    expect(shared).toEqual(alone);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(one).toEqual({ inThread: 6, perWorker: [], messages: 0 });
    expect(two.perWorker).toHaveLength(1);
    expect(two.inThread).toBeGreaterThan(0);
    expect(two.inThread + two.perWorker[0]!).toBe(6);
    expect(two.messages).toBe(two.perWorker[0]);
    // Not vacuous: the seeds differ.
    expect(new Set(alone.map((r) => r.digest)).size).toBe(6);
  }, 120_000);

  it('two jobs on two lanes: the worker does not hoard the second one', async () => {
    const two: JobCounts = { inThread: 0, perWorker: [], messages: 0 };
    await runJobs(jobs.slice(0, 2), 2, 'swarm', runSwarmJob, undefined, two);
    expect(two).toEqual({ inThread: 1, perWorker: [1], messages: 1 });
  }, 120_000);

  it('a configuration error stays a ConfigError, from the worker (job 0) or from this thread (job 1)', async () => {
    const bad: SwarmJob = { protocol: 'no-such-lock', seed: 1, options: {} };
    await expect(runJobs([bad, ...jobs.slice(0, 2)], 2, 'swarm', runSwarmJob)).rejects.toBeInstanceOf(ConfigError);
    await expect(runJobs([jobs[0]!, bad], 2, 'swarm', runSwarmJob)).rejects.toBeInstanceOf(ConfigError);
  }, 120_000);
});
