import { runInMemory } from '@lockfabric/harness';
import { summarizeVerdict } from '@lockfabric/check';
import type { ProtocolDefinition } from '@lockfabric/locks-common';
import type { Span, SpanAttributeValue, Trace } from '@lockfabric/ports';
import { checkConflictFcfs } from '@lockfabric/check';
import type { SwarmCase } from './swarm.js';

/** Errors an acquire may legitimately end with; anything else is a finding. */
const TYPED_ACQUIRE_ERRORS = new Set(['LockAbortedError', 'LockTimeoutError']);

/** Counts `lock.reset` spans by cause, to show which repair paths a sweep exercised. */
export class ResetCounter implements Trace {
  readonly causes: Record<string, number> = {};

  startSpan(name: string, options?: { attributes?: Record<string, SpanAttributeValue> }): Span {
    if (name === 'lock.reset') {
      const cause = String(options?.attributes?.['lockfabric.dslr.reset_cause'] ?? '?');
      this.causes[cause] = (this.causes[cause] ?? 0) + 1;
    }
    return { context: undefined, setAttribute() {}, addLink() {}, recordError() {}, end() {} };
  }
}

export interface SeedFindings {
  readonly problems: string[];
  readonly aborts: number;
  readonly cas: number;
  readonly acquires: number;
}

/**
 * Runs one swarm case and lists what is wrong with it: exclusion violations, liveness violations,
 * untyped failures, a run cut off, and — for fault-free runs — any CAS (spec I12), any abort, or a
 * conflicting request served out of FAA order (I7). Crash-free runs must not abort either.
 */
export async function checkSeed(protocol: ProtocolDefinition, swarm: SwarmCase, trace?: Trace): Promise<SeedFindings> {
  const result = await runInMemory({
    substrate: 'sim',
    protocol,
    protocolOptions: swarm.options,
    crashProbability: swarm.crashProbability,
    spec: swarm.spec,
    ...(trace ? { trace } : {}),
  });
  const { verdict } = result;
  const errors = verdict.liveness.counts.acquireErrors;
  const aborts = errors['LockAbortedError'] ?? 0;
  const cas = result.verbs['cas'] ?? 0;
  const problems: string[] = [];
  if (verdict.exclusion.violationCount > 0) problems.push(`exclusion: ${summarizeVerdict(verdict, 2)}`);
  if (!verdict.liveness.ok) problems.push(`liveness: ${summarizeVerdict(verdict, 2)}`);
  if (result.cutOff) problems.push('run cut off with acquires pending');
  const untyped = Object.keys(errors).filter((name) => !TYPED_ACQUIRE_ERRORS.has(name));
  if (untyped.length > 0) problems.push(`untyped acquire failures: ${untyped.join(', ')}`);
  if (swarm.crashProbability === 0 && aborts > 0) problems.push(`${aborts} aborts in a crash-free run`);
  if (swarm.faultFree) {
    if (cas > 0) problems.push(`${cas} CAS in a fault-free run`);
    const fcfs = checkConflictFcfs(result.history, { slackNs: 1_000 });
    if (!fcfs.ok) problems.push(`FCFS: ${JSON.stringify(fcfs.violations[0])}`);
  }
  return { problems, aborts, cas, acquires: verdict.liveness.counts.acquiresOk };
}
