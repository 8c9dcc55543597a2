/**
 * Spec I4 (conservation): once a crash-free run is quiescent, every lock word has released exactly
 * what it issued (nX == maxX, nS == maxS) or was reset to 0 — no lost release, no bounce increment
 * left behind, no ticket of a timed-out waiter left unreleased (A16), whatever the resets. The runs
 * are swarm seeds (`runSwarmSeed`) of a fault-free profile drawing DSLR's options (small counter
 * limits) and multi-slot tickets, with acquire timeouts short enough that waiters give up.
 */
import { describe, expect, it } from 'vitest';
import { WordLayout, dslr, dslrMultiSlotOptions, dslrSwarmOptions, drained, formatCounters } from '../src/index.js';
import { dslrFaultFree, runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult, SwarmMix } from '@lockfabric/harness';

const crashFree = dslrFaultFree(dslr, (random) => ({ ...dslrSwarmOptions(random), ...dslrMultiSlotOptions(random) }));
/** Short enough that some waiters give up (their tickets must still be released). */
const SPEC = { timeoutMs: 0.05 };
/** Virtual time after the workload for given-up waiters to release their tickets in the background. */
const SETTLE_MS = 10;
const SEEDS = 40;

interface Reached {
  timeouts: number;
  smallLimitSeeds: number;
  multiSlotSeeds: number;
}

/** Judge: every word drained once the workload ended and settled (before the heal probe, whose skips would repair it). */
function conservation(reached: Reached) {
  return (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
    reached.timeouts += run.verdict.liveness.counts.acquireErrors['LockTimeoutError'] ?? 0;
    if (Number(mix.options['counterLimit'] ?? Infinity) <= 16) reached.smallLimitSeeds++;
    if (Number(mix.options['slots'] ?? 1) > 1) reached.multiSlotSeeds++;
    const layout = WordLayout.of('standard', Number(mix.options['counterLimit'] ?? 32768));
    const left: string[] = [];
    for (let lock = 0; lock < mix.spec.locks; lock++) {
      const counters = layout.decode(run.lockWords![lock]!);
      if (!drained(counters)) left.push(`lock ${lock}: ${formatCounters(counters, layout)}`);
    }
    return left.length > 0 ? `not drained at quiescence: ${left.join(', ')}` : undefined;
  };
}

describe('dslr: conservation at quiescence (I4)', () => {
  it(`${SEEDS} crash-free swarm seeds: every word is drained, with resets, multi-slot tickets and timed-out waiters`, async () => {
    const reached: Reached = { timeouts: 0, smallLimitSeeds: 0, multiSlotSeeds: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const result = await runSwarmSeed(crashFree, seed, {}, { spec: SPEC, lockWordsAfterMs: SETTLE_MS, judge: conservation(reached) });
      expect(result.failure, `${result.description}\n${result.failure?.detail}`).toBeUndefined();
    }
    expect(reached.timeouts).toBeGreaterThan(0);
    expect(reached.smallLimitSeeds).toBeGreaterThan(0);
    expect(reached.multiSlotSeeds).toBeGreaterThan(0);
  }, 120_000);

  it('the check fails when a release is lost (abandoned tickets of timed-out waiters, A16 paper-literal)', async () => {
    let found: string | undefined;
    for (let seed = 1; seed <= SEEDS && !found; seed++) {
      const result = await runSwarmSeed(crashFree, seed, { paperLiteralAbandonTicket: true }, { spec: SPEC, lockWordsAfterMs: SETTLE_MS, judge: conservation({ timeouts: 0, smallLimitSeeds: 0, multiSlotSeeds: 0 }) });
      found = result.failure?.detail;
    }
    expect(found).toMatch(/not drained at quiescence/);
  }, 120_000);
});
