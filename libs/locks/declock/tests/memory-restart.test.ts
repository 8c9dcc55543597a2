import { runInMemory, runSwarmSeed } from '@lockfabric/harness';
import { describe, expect, it } from 'vitest';
import { declock } from '../src/index.js';

// DecLock §4.6: after a memory node recovers, every lock on it is reset before a new operation.
// The node's words come back zeroed (the reset state); what a compute node must reset is its own
// state about the lost table: local locks, reset counters, gates and waits.
const US = 1_000;

describe('declock: memory-node restarts', () => {
  // Swarm seeds (27 of the first 60 failed before the fix) that restart the memory node while clients'
  // verbs are in flight: a local waiter or owner whose verb failed left its node's local lock
  // PENDING for ever, and the heal probe waited behind it (liveness). Either rule alone repairs
  // it — the failed client passes the turn on, or the reset drops the node's local locks of the
  // lost table — so only the two mutants together bring the old behaviour back.
  it.each([10, 20])('swarm seed %i: live with the rules, stuck without both', async (seed) => {
    const fixed = await runSwarmSeed(declock, seed);
    expect(fixed.description).toMatch(/memory=restart@/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(declock, seed, { mutantKeepTurnOnFailure: true, mutantNoTableReset: true });
    expect(mutant.failure?.kind).toBe('liveness');
  });

  // Holds (10 ms) span the restart while clients of the same node wait behind them. Without the
  // reset, a reader's share of a hold on the lost table is still released as if it held on, and
  // local grants pass such holds on after the restart: both overlap a client of another node that
  // took the lock on the new, empty table. (The swarm's microsecond holds rarely span a restart.)
  const spec = { clients: 6, locks: 1, readRatio: 0.5, distribution: 'uniform', operations: 36, thinkNs: 100 * US, criticalSectionNs: 10_000 * US, timeoutMs: 50 } as const;
  const restart = { atMs: 15, downMs: 0.1 } as const;
  const run = (seed: number, mutantNoTableReset: boolean) =>
    runInMemory({ substrate: 'sim', protocol: declock, protocolOptions: { mutantNoTableReset }, spec: { ...spec, seed }, computeNodes: 2, memoryRestart: restart, heal: { budgetMs: 50 } });

  it.each([1, 4])('seed %i: holds on the lost table end TABLE_LOST, exclusion holds; the mutant hands them on and breaks it', async (seed) => {
    const fixed = await run(seed, false);
    expect(fixed.memoryRestart?.incarnation).toBe(2);
    expect(fixed.summary.failuresByCode['TABLE_LOST']).toBeGreaterThanOrEqual(1);
    expect(fixed.verdict.ok, fixed.verdict.violations.map((v) => JSON.stringify(v)).join('\n')).toBe(true);
    expect(fixed.heal?.stuck).toStrictEqual([]);
    const mutant = await run(seed, true);
    expect(mutant.verdict.violations.length).toBeGreaterThan(0);
  });

  // Swarm seed 851 (found by a 1 000-seed run): a client's acquire FAA landed on the old table just
  // before the memory node crashed, and a cut of its node held the completion until long after the
  // restart. Granted at once by it, the client held a lock on the lost table beside a client of its
  // own node granted on the new one. An FAA that completes after its table was lost grants nothing.
  it('swarm seed 851: no grant from an FAA that completes after the restart; the mutant breaks exclusion', async () => {
    const fixed = await runSwarmSeed(declock, 851);
    expect(fixed.description).toMatch(/cuts=.* memory=restart@/);
    expect(fixed.failure, fixed.failure?.detail).toBeUndefined();
    const mutant = await runSwarmSeed(declock, 851, { mutantGrantFromLostFaa: true });
    expect(mutant.failure?.kind).toBe('safety');
  });
});
