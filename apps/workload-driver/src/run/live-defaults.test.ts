import { describe, expect, it } from 'vitest';
import { liveOptionProblems } from './live-defaults.js';

describe('liveOptionProblems', () => {
  it('refuses options only a memory-node service reads, one line each, and lets client options through', () => {
    const problems = liveOptionProblems('rpc', { cpuNs: 0, retransmitNs: 1_000_000, mutantKeepDeadHolds: true });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^--opt cpuNs: rpc's memory-node service reads it/);
    expect(problems[1]).toMatch(/^--opt mutantKeepDeadHolds:/);
    // ShiftLock's clients and its recovery server must agree on these.
    expect(liveOptionProblems('shiftlock', { eraBuckets: 2, leaseNs: 5_000_000 })).toEqual([expect.stringMatching(/^--opt eraBuckets:/)]);
  });

  it('has nothing to say about a protocol without a memory-node service, or no options', () => {
    expect(liveOptionProblems('caslock', { cpuNs: 0 })).toEqual([]);
    expect(liveOptionProblems('traditional-ro')).toEqual([]);
  });
});
