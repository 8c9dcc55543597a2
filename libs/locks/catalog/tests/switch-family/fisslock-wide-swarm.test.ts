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
const KNOWN_OPEN: ReadonlyMap<number, { readonly rate: number; readonly kind: string; readonly why: string }> = new Map([
  // Drawn since coordinator outages cover kills (the outage only shapes the schedule). A GRANTED
  // copy of one shared request, bounced and duplicated on the link, is counted by machine 3 and
  // again by machine 2's later shared agent, which cannot tell it from a fresh copy: lock 2 keeps
  // a holder no client owns. Only a `stalled-queue` suspicion shows it, and the stuck reporter
  // does not send those, so no §5.3 repair runs. Lock 3 is never probed (lock 2 used the budget).
  [236, { rate: 0.1, kind: 'liveness', why: 'kill inside a coordinator outage under 10 % loss' }],
]);

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

describe('the wide swarm sweep catches mutantNoIncarnationCheck at pinned seeds (10 %)', () => {
  it('seed 20: exclusion broken in the history; the protocol passes the seed', async () => {
    expect((await runSwarmSeed(fisslock, 20, {}, { switchFaultRate: 0.1 })).failure).toBeUndefined();
    const r = await runSwarmSeed(noIncarnationCheck, 20, {}, { switchFaultRate: 0.1 });
    expect(r.failure).toMatchObject({ kind: 'safety', reproduce: 'lockfabric check --swarm --protocol fisslock --first-seed 20 --seeds 1' });
    expect(r.failure?.detail).toContain('exclusion');
  });

  // What the hook saw here is a packet its sender resends for ever: a stale ② copy the decider
  // dropped unanswered. The decider now ACKs that copy (mutantSilentStaleCopy restores the drop),
  // after which seed 8 ends clean under this mutant, and no seed of 1–450 shows it to the hook
  // alone; the seed keeps the old drop to show what the hook adds to the history.
  it('seed 8 (with the silent drop of stale ② copies): only FissLock\'s invariants hook sees it', async () => {
    const silent = { ...noIncarnationCheck, buildSwitchProgram: silentStaleCopies(noIncarnationCheck) };
    expect((await runSwarmSeed(fisslock, 8, {}, { switchFaultRate: 0.1 })).failure).toBeUndefined();
    expect((await runSwarmSeed(fisslock, 8, { mutantSilentStaleCopy: true }, { switchFaultRate: 0.1 })).failure).toBeUndefined();
    const r = await runSwarmSeed(silent, 8, {}, { switchFaultRate: 0.1 });
    expect(r.failure).toMatchObject({ kind: 'safety' });
    expect(r.failure?.detail).toMatch(/^fisslock invariants after healing:\n.*unacknowledged/);
    const unhooked = await runSwarmSeed({ ...silent, swarm: historyOnly }, 8, {}, { switchFaultRate: 0.1 });
    expect(unhooked.failure).toBeUndefined();
  });
});
