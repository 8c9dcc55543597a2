import { describe, expect, it } from 'vitest';
import { InJobOrder, WorkerPoolError } from './pool.js';

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
