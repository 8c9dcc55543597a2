import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { InMemoryRunResult } from '../in-memory-run.js';
import { runSwarmSeed } from './run.js';

/** What a sweep of {@link sweepUnrecoverableCrashes} saw, summed over its seeds. */
export interface CrashSweepOutcome {
  /** One line per seed that broke the rules, with the seed's fault mix; empty when all held. */
  readonly problems: readonly string[];
  /** Clients crashed across the sweep. */
  readonly crashes: number;
  /** Acquires that gave up typed (`LockTimeoutError`) across the sweep. */
  readonly timeouts: number;
}

const STUCK_AFTER_HEALING = /^after healing, locks [\d, ]+ not acquirable/;

/**
 * The sweep of a protocol that cannot take a crashed holder's lock back (NCoSED, RMA-RW, Sherman):
 * swarm seeds 1..`seeds` with none of the faults its profile claims (jitter, drift and coordinator
 * crashes only), and client crashes on every third seed. The rules:
 * - exclusion always holds, and every acquire completes or gives up typed (`LockTimeoutError`);
 * - a seed without crashes passes outright;
 * - a seed with crashes may fail only the heal probe, on a lock a crashed client kept.
 * Acquire timeouts alternate between short and long on crash-free seeds, so both waiting and
 * giving up are exercised.
 */
export async function sweepUnrecoverableCrashes(
  protocol: ProtocolDefinition,
  seeds: number,
  options: ProtocolOptions = {},
): Promise<CrashSweepOutcome> {
  const faultFree = { ...protocol, swarm: {} };
  // The probe would only wait for a lock that stays held: a short budget says so quickly.
  const crashing = { ...protocol, swarm: { healBudgetMs: 0.1 } };
  const problems: string[] = [];
  let crashes = 0;
  let timeouts = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    let run: InMemoryRunResult | undefined;
    const judge = (r: InMemoryRunResult): string | undefined => {
      run = r;
      const untyped = Object.keys(r.verdict.liveness.counts.acquireErrors).filter((name) => name !== 'LockTimeoutError');
      return untyped.length > 0 ? `acquires failed with ${untyped.join(', ')}` : undefined;
    };
    const crash = seed % 3 === 0;
    const spec = { timeoutMs: crash ? 0.05 : [0.05, 5][seed % 2]! };
    const result = await runSwarmSeed(crash ? crashing : faultFree, seed, options, { ...(crash ? { crashProbability: 0.05 } : {}), spec, judge });
    const where = `seed ${seed} (${result.description})`;
    if (!run) {
      problems.push(`${where}: the run never reached the judge: ${result.failure?.kind}: ${result.failure?.detail}`);
      continue;
    }
    const failure = result.failure;
    const allowed = failure !== undefined && crash && failure.kind === 'liveness' && STUCK_AFTER_HEALING.test(failure.detail);
    if (failure && !allowed) problems.push(`${where}: ${failure.kind}: ${failure.detail}`);
    timeouts += run.verdict.liveness.counts.acquireErrors.LockTimeoutError ?? 0;
    crashes += run.crashed.size;
  }
  return { problems, crashes, timeouts };
}
