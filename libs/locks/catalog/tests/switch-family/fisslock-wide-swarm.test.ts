import { describe, expect, it } from 'vitest';
import { runSwarmSeed } from '@lockfabric/harness';
import type { SwarmSeedResult } from '@lockfabric/harness';
import { fisslock, fissLockDecider, fissLockDeciderOptions } from '@lockfabric/lock-fisslock';
import type { ProtocolDefinition } from '@lockfabric/locks-common';

// FissLock's wide sweeps on the one swarm runner: each seed draws its mix as every protocol's does
// (workload, kills, pauses, cuts, memory restarts, flushed verbs), and the extras knob replaces its
// switch faults with loss, duplication, reordering and delay at 2 % or 10 % on both links. The
// swarm judges the history (exclusion, then liveness after healing) and, through FissLock's
// `invariants` hook, the agent pools against the decider once healed: one agent per lock where the
// decider's `mid` says, in its mode (Lemma 1), nothing left pending. The recorded regressions stay
// on their own rig (libs/locks/fisslock/tests/sweep-faults-wide.test.ts).

/** Runs seeds first…last at `rate` and fails with every failing seed's reproduction. */
async function sweep(protocol: ProtocolDefinition, first: number, last: number, rate: number): Promise<SwarmSeedResult[]> {
  const results: SwarmSeedResult[] = [];
  for (let seed = first; seed <= last; seed++) results.push(await runSwarmSeed(protocol, seed, {}, { switchFaultRate: rate }));
  return results;
}

/**
 * Seeds that fail for a known, open reason (issue 13), kept in view rather than out of the sweep:
 * each must still fail as stated, so a fix shows here and the seed moves back to clean.
 */
const KNOWN_OPEN: ReadonlyMap<number, { readonly rate: number; readonly kind: string; readonly why: string }> = new Map();

function expectClean(results: readonly SwarmSeedResult[], rate: number): void {
  const open = (r: SwarmSeedResult) => KNOWN_OPEN.get(r.seed)?.rate === rate;
  const failed = results.filter((r) => r.failure && !open(r)).map((r) => `${r.description}\n  ${r.failure!.kind}: ${r.failure!.detail}\n  (${r.failure!.reproduce} with extras switchFaultRate)`);
  expect(failed).toEqual([]);
  for (const r of results.filter(open)) expect(r.failure?.kind, `seed ${r.seed} (${KNOWN_OPEN.get(r.seed)!.why}) no longer fails: take it off KNOWN_OPEN`).toBe(KNOWN_OPEN.get(r.seed)!.kind);
}

describe('fisslock wide swarm sweeps (switch faults on both links)', () => {
  for (const [rate, first, last] of [
    [0.1, 1, 100],
    [0.1, 101, 200],
    [0.1, 201, 300],
    [0.02, 1, 150],
  ] as const) {
    it(`${rate * 100} %, seeds ${first}–${last}: safe, live after healing, FissLock's invariants hold`, async () => {
      expectClean(await sweep(fisslock, first, last, rate), rate);
    }, 180_000);
  }
});

// Test-only: the decider accepts every FREE / transfer GRANT without the incarnation check.
const noIncarnationCheck: ProtocolDefinition = {
  ...fisslock,
  buildSwitchProgram: (input) => fissLockDecider({ ...fissLockDeciderOptions(input.workloadLocks, input.options), mutantNoIncarnationCheck: true }),
};
const { invariants: _hook, ...historyOnly } = fisslock.swarm!;
/** `protocol`'s switch program with the decider's old silent drop of stale ② copies. */
const silentStaleCopies = (protocol: ProtocolDefinition): NonNullable<ProtocolDefinition['buildSwitchProgram']> => (input) =>
  protocol.buildSwitchProgram!({ ...input, options: { ...input.options, mutantSilentStaleCopy: true } });

// Seed 236 (kill inside a coordinator outage, 10 % on both links) showed it first: a ② copy
// bounced at its home and duplicated on the link reached machine 2 after its home had counted it,
// and machine 2's next shared agent counted it again: lock 2 kept a shared holder no client owns,
// and only a stalled-queue suspicion showed it. The copy now names its home and is counted there
// only. Under the old rule (`mutantCountForeignCopy`) the coordinator now confirms the suspicion
// and repairs the lock. Since a coordinator crash may land before the first view, 236's schedule
// no longer reaches the case; seed 960 (a pause, duplication and reordering on both links) does:
// one confirmed suspicion repaired under the mutant, none with the rule.
describe('seed 960: a ② copy is counted at the home it names only (10 %)', () => {
  it('passes with no suspicion repaired; with mutantCountForeignCopy the stuck holder is found only by a confirmed suspicion', async () => {
    const counts: (Readonly<Record<string, number>> | undefined)[] = [];
    const judge = (run: { readonly control?: { readonly counts: Readonly<Record<string, number>> } | undefined }): undefined => void counts.push(run.control?.counts);
    expect((await runSwarmSeed(fisslock, 960, {}, { switchFaultRate: 0.1, judge })).failure).toBeUndefined();
    const r = await runSwarmSeed(fisslock, 960, { mutantCountForeignCopy: true }, { switchFaultRate: 0.1, judge });
    expect(r.failure, r.failure?.detail).toBeUndefined();
    expect(counts.map((c) => c?.['fissSuspicionsRepaired'])).toStrictEqual([0, 1]);
  });
});

describe('the wide swarm sweep catches mutantNoIncarnationCheck at pinned seeds (10 %)', () => {
  // Seed 20 was pinned here until ② copies named their home: its violation went through a copy
  // counted away from its home, which no agent counts now (it still fails with both mutants).
  it('seed 23: exclusion broken in the history; the protocol passes the seed', async () => {
    expect((await runSwarmSeed(fisslock, 23, {}, { switchFaultRate: 0.1 })).failure).toBeUndefined();
    const r = await runSwarmSeed(noIncarnationCheck, 23, {}, { switchFaultRate: 0.1 });
    expect(r.failure).toMatchObject({ kind: 'safety', reproduce: 'lockfabric check --swarm --protocol fisslock --first-seed 23 --seeds 1' });
    expect(r.failure?.detail).toContain('exclusion');
  });

  // What the hook sees here is a packet its sender resends for ever: a stale ② copy the decider
  // dropped unanswered. The decider now ACKs that copy (mutantSilentStaleCopy restores the drop),
  // and without it no seed of 1–120 shows this mutant to the hook alone; the seed keeps the old
  // drop to show what the hook adds to the history. (Seed 8 was pinned until ② copies named their
  // home; under both mutants it now fails in the history, as a liveness failure.)
  it('seed 9 (with the silent drop of stale ② copies): only FissLock\'s invariants hook sees it', async () => {
    const silent = { ...noIncarnationCheck, buildSwitchProgram: silentStaleCopies(noIncarnationCheck) };
    expect((await runSwarmSeed(fisslock, 9, {}, { switchFaultRate: 0.1 })).failure).toBeUndefined();
    expect((await runSwarmSeed(fisslock, 9, { mutantSilentStaleCopy: true }, { switchFaultRate: 0.1 })).failure).toBeUndefined();
    const r = await runSwarmSeed(silent, 9, {}, { switchFaultRate: 0.1 });
    expect(r.failure).toMatchObject({ kind: 'safety' });
    expect(r.failure?.detail).toMatch(/^fisslock invariants after healing:\n.*unacknowledged/);
    const unhooked = await runSwarmSeed({ ...silent, swarm: historyOnly }, 9, {}, { switchFaultRate: 0.1 });
    expect(unhooked.failure).toBeUndefined();
  });
});
