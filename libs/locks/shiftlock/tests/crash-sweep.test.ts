import { runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult } from '@lockfabric/harness';
import { LOCK_ATTR } from '@lockfabric/locks-common';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { noopTrace } from '@lockfabric/ports';
import type { Span, SpanAttributeValue, StartSpanOptions, Trace } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { shiftlock } from '../src/index.js';

const SEEDS = 30;
const THRESHOLDS = [1, 2, 16, 'inf'] as const;
const ERA_ATTR = 'lockfabric.shiftlock.era';
const RECOVERY_ATTR = 'lockfabric.shiftlock.recovery';

/** Keeps the attributes of `lock.reset` spans only: a sweep's worth of every span would be large. */
class ResetSpans implements Trace {
  readonly resets: Record<string, SpanAttributeValue>[] = [];
  startSpan(name: string, options: StartSpanOptions = {}): Span {
    if (name !== 'lock.reset') return noopTrace.startSpan(name, options);
    const attributes: Record<string, SpanAttributeValue> = { ...options.attributes };
    this.resets.push(attributes);
    return { context: undefined, setAttribute: (key, value) => void (attributes[key] = value), addLink: () => undefined, recordError: () => undefined, end: () => undefined };
  }
}

/** Seed → ShiftLock's options the old sweep varied: writer threshold, a short lease, one-sided recovery, era buckets. */
function optionsFor(seed: number) {
  return {
    consecutiveWriters: THRESHOLDS[seed % THRESHOLDS.length]!,
    leaseNs: 50_000 + (seed % 4) * 0.05,
    ...(seed % 5 === 0 ? { recovery: 'one-sided' } : {}),
    ...(seed % 4 === 0 ? { eraBuckets: 4 } : {}),
  };
}

/**
 * Reset spans that break the recovery invariants: I13, no reset without a failure; I14, eras go
 * up with every reset a server accepts, so each lock's resets see rising eras whatever bucket it
 * shares (server spans carry no recovery mode).
 */
function resetProblems(resets: readonly Record<string, SpanAttributeValue>[], crashed: number): { problems: string[]; accepted: number } {
  const problems: string[] = [];
  const accepted = resets.filter((r) => r[RECOVERY_ATTR] === undefined ? r[LOCK_ATTR.outcome] === 'accepted' : r[RECOVERY_ATTR] === 'one-sided' && r[LOCK_ATTR.outcome] === 'ok');
  if (crashed === 0 && accepted.length > 0) problems.push(`I13: ${accepted.length} resets with no client crashed`);
  const eras = new Map<string, bigint>();
  for (const reset of accepted.filter((r) => r[RECOVERY_ATTR] === undefined)) {
    const key = `server ${String(reset[LOCK_ATTR.client])} lock ${String(reset[LOCK_ATTR.lock])}`;
    const era = BigInt(String(reset[ERA_ATTR])) + 1n;
    if (era <= (eras.get(key) ?? 0n)) problems.push(`I14: ${key} reset to era ${era} after era ${eras.get(key)}`);
    eras.set(key, era);
  }
  return { problems, accepted: accepted.length };
}

/** The sweep's own judge: typed failures only, and the reset invariants; tallies crashes and resets. */
function sweepJudge(trace: ResetSpans, tally: { crashes: number; resets: number }) {
  return (run: InMemoryRunResult): string | undefined => {
    const untyped = Object.keys(run.verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError');
    const { problems, accepted } = resetProblems(trace.resets, run.crashed.size);
    tally.resets += accepted;
    tally.crashes += run.crashed.size;
    return [...(untyped.length > 0 ? [`acquires failed with ${untyped.join(', ')}`] : []), ...problems].join('\n') || undefined;
  };
}

// On the swarm's generator and judge (exclusion, liveness, heal probe) with client crashes at a
// fixed rate and no other fault but jitter, clock drift and coordinator crashes, so that every
// reset can be traced back to a crash (I13). A crashed client stops while holding or waiting;
// recovery through the memory node (or one-sided) must get every lock back.
const crashesOnly = { ...shiftlock, swarm: {} };
const runSeed = (seed: number, options: ProtocolOptions, crashProbability: number, trace: ResetSpans, tally: { crashes: number; resets: number }) =>
  runSwarmSeed(crashesOnly, seed, { ...optionsFor(seed), ...options }, { crashProbability, ...(seed % 3 === 0 ? { spec: { timeoutMs: 0.3 } } : {}), trace, judge: sweepJudge(trace, tally) });

describe('sim sweep with client crashes: leases, RelCnt watching and era-fenced recovery', () => {
  it(`${SEEDS} swarm seeds: no exclusion violation; every live client's acquire completes or fails typed; resets only after crashes, eras rising`, async () => {
    const tally = { crashes: 0, resets: 0 };
    for (let seed = 1; seed <= SEEDS; seed++) {
      const result = await runSeed(seed, {}, 0.01, new ResetSpans(), tally);
      expect(result.failure, `${result.description}\n${result.failure?.kind}: ${result.failure?.detail}`).toBeUndefined();
    }
    // Both halves were exercised: many crashes, and many of them recovered by a reset.
    expect(tally.crashes).toBeGreaterThan(30);
    expect(tally.resets).toBeGreaterThan(20);
  }, 60_000);
});

describe('the reset invariants are not vacuous', () => {
  it("paperLiteralEpoch (A1) resets a lock nobody crashed on: I13 fails swarm seed 1 without crashes; ShiftLock itself passes it", async () => {
    const tally = { crashes: 0, resets: 0 };
    const caught = await runSeed(1, { paperLiteralEpoch: true }, 0, new ResetSpans(), tally);
    expect(caught.failure?.kind).toBe('safety');
    expect(caught.failure?.detail).toMatch(/^I13: \d+ resets with no client crashed/);
    expect((await runSeed(1, {}, 0, new ResetSpans(), tally)).failure).toBeUndefined();
  });

  it('I14 flags a server reset that does not raise its era', () => {
    const reset = (era: string) => ({ [LOCK_ATTR.client]: '0/4095', [LOCK_ATTR.lock]: 3, [ERA_ATTR]: era, [LOCK_ATTR.outcome]: 'accepted' });
    expect(resetProblems([reset('0'), reset('1')], 1).problems).toEqual([]);
    expect(resetProblems([reset('0'), reset('0')], 1).problems).toEqual(['I14: server 0/4095 lock 3 reset to era 1 after era 1']);
  });
});
