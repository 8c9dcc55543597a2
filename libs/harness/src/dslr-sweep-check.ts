// Seed checks of the DSLR family's swarm sweeps, shared by libs/locks/dslr and dslr-backoff tests.
import { runInMemory } from './in-memory-run.js';
import { summarizeVerdict } from '@lockfabric/check';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { Random, Span, SpanAttributeValue, Trace } from '@lockfabric/ports';
import type { InMemoryRunResult } from './in-memory-run.js';
import type { SwarmMix } from './swarm/case.js';
import { checkConflictFcfs } from '@lockfabric/check';
import type { SwarmCase } from './dslr-swarm.js';

/** Errors an acquire may legitimately end with; anything else is a finding. */
const TYPED_ACQUIRE_ERRORS = new Set(['LockAbortedError', 'LockTimeoutError']);

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

/** Forwards spans to every trace given. */
function both(a: Trace, b: Trace | undefined): Trace {
  if (!b) return a;
  return {
    startSpan(name, options) {
      const x = a.startSpan(name, options);
      const y = b.startSpan(name, options);
      return {
        context: undefined,
        setAttribute: (key, value) => (x.setAttribute(key, value), y.setAttribute(key, value)),
        addLink: (context, attributes) => (x.addLink(context, attributes), y.addLink(context, attributes)),
        recordError: (error) => (x.recordError(error), y.recordError(error)),
        end: () => (x.end(), y.end()),
      };
    },
  };
}

export interface SeedFindings {
  readonly problems: string[];
  readonly aborts: number;
  /** CAS verbs other than those of fenced releases: repairs (skips, resets, withdrawals). */
  readonly cas: number;
  readonly acquires: number;
}

/**
 * Runs one swarm case and lists what is wrong with it: exclusion violations, liveness violations,
 * untyped failures, a run cut off, and — for fault-free runs — any repair CAS (spec I12; the CAS of
 * fenced releases are counted apart), any abort, or a
 * conflicting request served out of FAA order (I7). Crash-free runs must not abort either.
 */
export async function checkSeed(protocol: ProtocolDefinition, swarm: SwarmCase, trace?: Trace): Promise<SeedFindings> {
  const tally = new ResetCounter();
  const result = await runInMemory({
    substrate: 'sim',
    protocol,
    protocolOptions: swarm.options,
    crashProbability: swarm.crashProbability,
    spec: swarm.spec,
    trace: both(tally, trace),
  });
  const { verdict } = result;
  const errors = verdict.liveness.counts.acquireErrors;
  const aborts = errors['LockAbortedError'] ?? 0;
  const cas = (result.verbs['cas'] ?? 0) - tally.releaseCas;
  const problems: string[] = [];
  if (verdict.exclusion.violationCount > 0) problems.push(`exclusion: ${summarizeVerdict(verdict, 2)}`);
  // A release refused inside its lease means a live holder was skipped or reset: a safety failure
  // even when nobody happened to be granted during the rest of that hold.
  const broken = result.summary.failuresByCode['LEASE_BROKEN'] ?? 0;
  if (broken > 0) problems.push(`lease broken: ${broken} releases found their ticket skipped or reset inside the lease`);
  if (!verdict.liveness.ok) problems.push(`liveness: ${summarizeVerdict(verdict, 2)}`);
  if (result.cutOff) problems.push('run cut off with acquires pending');
  const untyped = Object.keys(errors).filter((name) => !TYPED_ACQUIRE_ERRORS.has(name));
  if (untyped.length > 0) problems.push(`untyped acquire failures: ${untyped.join(', ')}`);
  if (swarm.crashProbability === 0 && aborts > 0) problems.push(`${aborts} aborts in a crash-free run`);
  if (swarm.faultFree) {
    if (cas > 0) problems.push(`${cas} repair CAS in a fault-free run`);
    const fcfs = checkConflictFcfs(result.history, { slackNs: 1_000 });
    if (!fcfs.ok) problems.push(`FCFS: ${JSON.stringify(fcfs.violations[0])}`);
  }
  return { problems, aborts, cas, acquires: verdict.liveness.counts.acquiresOk };
}

/**
 * The DSLR family's sweeps on the swarm runner (`runSwarmSeed` extras): the protocol with no fault
 * its profile claims and no small counter limit (jitter, clock drift and coordinator crashes only),
 * where FCFS and "no repair" are promised.
 */
export function dslrFaultFree(protocol: ProtocolDefinition): ProtocolDefinition {
  return { ...protocol, swarm: { options: (random: Random): ProtocolOptions => ({ leaseMs: [0.2, 0.5, 1][random.int(3)]! }) } };
}

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
}

/** Judge of a seed with the family's faults: no release refused inside its lease (a live holder skipped or reset). */
export function dslrFaultyJudge(tally: DslrFaultyTally) {
  return (run: InMemoryRunResult, mix: SwarmMix): string | undefined => {
    if (mix.crashProbability > 0) tally.crashSeeds++;
    if (Number(mix.options['counterLimit'] ?? Infinity) <= 16) tally.smallLimitSeeds++;
    const broken = run.summary.failuresByCode['LEASE_BROKEN'] ?? 0;
    return broken > 0 ? `lease broken: ${broken} releases found their ticket skipped or reset inside the lease` : undefined;
  };
}
