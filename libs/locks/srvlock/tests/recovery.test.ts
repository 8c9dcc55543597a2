import { describe, expect, it } from 'vitest';
import { LockTable } from '../src/lock-table.js';
import type { LockRequest } from '../src/lock-table.js';
import { dropDeadMachine } from '../src/recovery.js';

const req = (lock: number, machine: number, task: number, mode: 'shared' | 'exclusive' = 'exclusive'): LockRequest => ({ lock, mode, machine, task, rid: 1, channel: 'packet' });

describe('dropDeadMachine', () => {
  it('drops the dead machine’s holds and queued requests and grants the survivors behind them', () => {
    const table = new LockTable();
    table.acquire(req(0, 2, 0)); // dead holder
    table.acquire(req(0, 2, 1)); // dead waiter
    table.acquire(req(0, 1, 0, 'shared'));
    table.acquire(req(0, 1, 1, 'shared'));
    table.acquire(req(1, 1, 2)); // survivor holds lock 1: untouched
    table.acquire(req(1, 2, 3)); // dead waiter behind it
    const granted = dropDeadMachine(table, 2, [0, 1, 2]);
    expect(granted.map((r) => `${r.lock}:${r.machine}/${r.task}`)).toStrictEqual(['0:1/0', '0:1/1']);
    expect(table.holders(0).map((r) => r.machine)).toStrictEqual([1, 1]);
    expect(table.holders(1).map((r) => r.task)).toStrictEqual([2]);
    expect(table.waiters(1)).toStrictEqual([]);
    // Nothing of machine 2 remains anywhere.
    for (const lock of [0, 1]) expect([...table.holders(lock), ...table.waiters(lock)].some((r) => r.machine === 2)).toBe(false);
  });

  it('leaves a table without the dead machine unchanged', () => {
    const table = new LockTable();
    table.acquire(req(0, 1, 0));
    table.acquire(req(0, 3, 0));
    expect(dropDeadMachine(table, 2, [0])).toStrictEqual([]);
    expect(table.holders(0).map((r) => r.machine)).toStrictEqual([1]);
    expect(table.waiters(0).map((r) => r.machine)).toStrictEqual([3]);
  });
});
