// Judges and profiles of the DSLR family's sweeps on the swarm runner (`runSwarmSeed` extras),
// shared by libs/locks/dslr and dslr-backoff tests.
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { Random, Span, SpanAttributeValue, Trace } from '@lockfabric/ports';
import type { WorkloadSpec } from '@lockfabric/workloads';
import type { InMemoryRunResult } from './in-memory-run.js';
import type { SwarmMix } from './swarm/case.js';
import { checkConflictFcfs } from '@lockfabric/check';
import { runSwarmSeed } from './swarm/run.js';

/**
 * Counts `lock.reset` spans by cause, to show which repair paths a sweep exercised, and the CAS
 * verbs of fenced releases (the `lock.release` span's `release_cas`), which are not repairs.
 */
export class ResetCounter implements Trace {
  readonly causes: Record<string, number> = {};
  /** Latest CAS count of each release span (set as each CAS is issued, so in-flight releases count too). */
  private readonly releases: { cas: number }[] = [];

  get releaseCas(): number {
    return this.releases.reduce((sum, r) => sum + r.cas, 0);
  }

  startSpan(name: string, options?: { attributes?: Record<string, SpanAttributeValue> }): Span {
    if (name === 'lock.reset') {
      const cause = String(options?.attributes?.['lockfabric.dslr.reset_cause'] ?? '?');
      this.causes[cause] = (this.causes[cause] ?? 0) + 1;
    }
    const release = { cas: 0 };
    if (name === 'lock.release') this.releases.push(release);
    const setAttribute = (key: string, value: SpanAttributeValue) => {
      if (key === 'lockfabric.dslr.release_cas') release.cas = Number(value);
    };
    return { context: undefined, setAttribute, addLink() {}, recordError() {}, end() {} };
  }
}

/**
 * The protocol with no fault its profile claims (jitter, clock drift and coordinator crashes
 * only). With the default options — no small counter limit — FCFS and "no repair" are promised;
 * `options` draws others (resets and multi-slot tickets for the conservation sweep, say).
 */
export function dslrFaultFree(protocol: ProtocolDefinition, options: (random: Random) => ProtocolOptions = (random) => ({ leaseNs: [200_000, 500_000, 1_000_000][random.int(3)]! })): ProtocolDefinition {
  return { ...protocol, swarm: { options } };
}

/**
 * The mutant hunts' harsher seeds: the seed's faults on one hot lock with 10 clients and 5 µs
 * critical sections, short leases and a counter limit of 8 (a reset every few acquires), so skips,
 * forced resets and withdrawals collide often (without the fixed clients and critical section, a
 * waiter crossing a reset's generation — `mutantNoGenerationCheck` — was met once in 60 seeds).
 * Pass `options` as `runSwarmSeed`'s base (they win over the drawn ones) and `spec` as its extras.
 */
export const DSLR_HOT: { readonly spec: Partial<WorkloadSpec>; readonly options: ProtocolOptions } = {
  spec: { locks: 1, clients: 10, distribution: 'uniform', operations: 150, criticalSectionNs: 5_000 },
  options: { leaseNs: 50_000, counterLimit: 8, backoffCapNs: 50_000 },
};

/** Judge of a fault-free seed: no repair CAS (spec I12; fenced releases' CAS apart), no abort, FCFS (I7). */
export function dslrFaultFreeJudge(tally: ResetCounter) {
  return (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
    const cas = (run.verbs['cas'] ?? 0) - tally.releaseCas;
    if (cas > 0) return `${cas} repair CAS in a fault-free run`;
    const aborts = run.verdict.liveness.counts.acquireErrors['LockAbortedError'] ?? 0;
    if (aborts > 0) return `${aborts} aborts in a fault-free run`;
    // FAA order is arrival order at the NIC: invoke times may differ from it by the jitter.
    const fcfs = checkConflictFcfs(run.history, { slackNs: 1_000 + mix.jitterNs });
    return fcfs.ok ? undefined : `FCFS: ${JSON.stringify(fcfs.violations[0])}`;
  };
}

/** What a sweep under the family's faults reached, for its own assertions. */
export interface DslrFaultyTally {
  crashSeeds: number;
  smallLimitSeeds: number;
  /** Acquires that ended LockAbortedError (a skipped or withdrawn ticket). */
  aborts: number;
}

/**
 * Errors an acquire of the family may end with under its faults: aborted (skipped or withdrawn),
 * timed out, or refused by a fenced or restarted table. Anything else escaped the protocol's typing.
 */
const TYPED_ACQUIRE_ERRORS = new Set(['LockAbortedError', 'LockTimeoutError', 'FabricAccessError']);

/**
 * Judge of a seed with the family's faults: no release refused inside its lease (a live holder
 * skipped or reset), and no acquire failure of an untyped error.
 */
export function dslrFaultyJudge(tally: DslrFaultyTally) {
  return (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
    if (mix.crashProbability > 0) tally.crashSeeds++;
    if (Number(mix.options['counterLimit'] ?? Infinity) <= 16) tally.smallLimitSeeds++;
    tally.aborts += run.verdict.liveness.counts.acquireErrors['LockAbortedError'] ?? 0;
    const broken = run.summary.failuresByCode['LEASE_BROKEN'] ?? 0;
    if (broken > 0) return `lease broken: ${broken} releases found their ticket skipped or reset inside the lease`;
    const untyped = Object.keys(run.verdict.liveness.counts.acquireErrors).filter((name) => !TYPED_ACQUIRE_ERRORS.has(name));
    return untyped.length > 0 ? `untyped acquire failures: ${untyped.join(', ')}` : undefined;
  };
}

/** What a faulty sweep of the family reached, and every seed that failed (description and detail). */
export interface DslrFaultySweep {
  readonly reached: DslrFaultyTally;
  readonly resets: ResetCounter;
  readonly failures: readonly string[];
}

/**
 * Swarm seeds `first` … `first + count - 1` of `protocol` under its faults, each judged by
 * {@link dslrFaultyJudge}; the repair paths reached are counted across the sweep (one loop for
 * DSLR's and DSLR+'s sweeps).
 */
export async function sweepDslrFaulty(protocol: ProtocolDefinition, seeds: { readonly first: number; readonly count: number }): Promise<DslrFaultySweep> {
  const resets = new ResetCounter();
  const reached: DslrFaultyTally = { crashSeeds: 0, smallLimitSeeds: 0, aborts: 0 };
  const judge = dslrFaultyJudge(reached);
  const failures: string[] = [];
  for (let seed = seeds.first; seed < seeds.first + seeds.count; seed++) {
    const result = await runSwarmSeed(protocol, seed, {}, { trace: resets, judge });
    if (result.failure) failures.push(`${result.description}\n${result.failure.detail}`);
  }
  return { reached, resets, failures };
}

/**
 * Fault-free swarm seeds 1 … `count` of `protocol` (wrap it with {@link dslrFaultFree}), each with
 * its own tally judged by {@link dslrFaultFreeJudge} (FCFS, no repair CAS, no abort); the failures.
 */
export async function sweepDslrFaultFree(protocol: ProtocolDefinition, count: number): Promise<string[]> {
  const failures: string[] = [];
  for (let seed = 1; seed <= count; seed++) {
    const tally = new ResetCounter();
    const result = await runSwarmSeed(protocol, seed, {}, { trace: tally, judge: dslrFaultFreeJudge(tally) });
    if (result.failure) failures.push(`${result.description}\n${result.failure.detail}`);
  }
  return failures;
}
