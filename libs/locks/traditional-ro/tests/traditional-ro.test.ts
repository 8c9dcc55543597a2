import { describe, expect, it } from 'vitest';
import { LocalOp, LockTable } from '@lockfabric/lock-srvlock';
import type { LockMode } from '@lockfabric/ports';
import { countedRun, soloSpec, swarmSweep } from '@lockfabric/harness';
import { READER_BYPASS_BOUND, traditionalRo } from '../src/index.js';

const req = (task: number, mode: LockMode) => ({ lock: 1, mode, machine: 9, task, rid: task, channel: 'local' as const });

/** Holds the lock shared, queues one writer, then offers `readers` more readers; returns how many were granted at once. */
function readersPassing(table: LockTable, readers: number): number {
  table.acquire(req(1, 'shared'));
  expect(table.acquire(req(2, 'exclusive')).outcome).toBe('queued');
  let granted = 0;
  for (let i = 0; i < readers; i++) if (table.acquire(req(100 + i, 'shared')).outcome === 'granted') granted++;
  return granted;
}

describe('traditional-ro: reader reordering (DSLR §6.4)', () => {
  it('an arriving reader passes a waiting writer while the lock is held shared, at most the bound per writer', () => {
    const table = new LockTable({ readerBypass: READER_BYPASS_BOUND });
    expect(readersPassing(table, 25)).toBe(READER_BYPASS_BOUND);
    // The writer is granted once every reader ahead of it has left, before the queued late readers.
    let granted: number[] = table.release(1, 9, 1, 1).map((r) => r.task);
    for (let i = 0; i < READER_BYPASS_BOUND; i++) granted = granted.concat(table.release(1, 9, 100 + i, 100 + i).map((r) => r.task));
    expect(granted[0]).toBe(2);
  });

  it('strict FIFO without the option (traditional): no reader passes the writer', () => {
    expect(readersPassing(new LockTable(), 25)).toBe(0);
  });

  it('a reader does not pass when the lock is held exclusive', () => {
    const table = new LockTable({ readerBypass: READER_BYPASS_BOUND });
    table.acquire(req(1, 'exclusive'));
    table.acquire(req(2, 'exclusive'));
    expect(table.acquire(req(3, 'shared')).outcome).toBe('queued');
  });

  it('mutant: without the bound every reader passes (the writer starves) and the bound test catches it', () => {
    expect(readersPassing(new LockTable({ readerBypass: READER_BYPASS_BOUND, mutantUnboundedBypass: true }), 25)).toBe(25);
  });
});

describe('traditional-ro: runs', () => {
  it('uncontended: two SEND/RECV exchanges per lock and unlock, like traditional', async () => {
    const { traffic, result } = await countedRun(traditionalRo, soloSpec(40));
    expect(result.verdict.ok).toBe(true);
    expect(traffic.clientSends).toBe(80);
    expect(traffic.serviceReplies.get(LocalOp.grant)).toBe(40);
    expect(traffic.serviceReplies.get(LocalOp.ack)).toBe(40);
  });
});

describe('traditional-ro: check --swarm', () => {
  // A short sweep here; e2e cli-check-swarm runs 300 seeds of each.
  it('20 seeds with compute-node kills, pauses and coordinator crashes: exclusion and healing hold', async () => {
    const { failures, kills } = await swarmSweep(traditionalRo, 20);
    expect(failures.map((f) => `${f.failure?.kind}: ${f.failure?.reproduce}`)).toEqual([]);
    expect(kills).toBeGreaterThan(4);
  }, 120_000);

  it('mutant: a release that clears every holder is caught as a safety failure', async () => {
    const { failures } = await swarmSweep(traditionalRo, 30, { mutantReleaseAllHolders: true });
    expect(failures.some((f) => f.failure?.kind === 'safety')).toBe(true);
  }, 60_000);
});
