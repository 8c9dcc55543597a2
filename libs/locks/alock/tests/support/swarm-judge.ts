import { runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult, SwarmSeedResult } from '@lockfabric/harness';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { alock, alockSwarmOptions, observedAlock, readAlockOptions } from '../../src/index.js';
import type { AlockEvent } from '../../src/index.js';
import { checkAlockEvents } from './invariants.js';
import type { InvariantReport } from './invariants.js';

/**
 * ALock's sweeps on the swarm runner (one generator of seeds and faults, one checker path): the
 * swarm's judge (exclusion, liveness, heal probe) plus ALock's own invariants over the protocol
 * steps its clients report (spec §4.2: I1, I5, I6 bounded overtaking, I7, I10).
 */

/** No fault ALock's profile claims (jitter, clock drift and coordinator crashes only), ALock's options drawn. */
export const FAULT_FREE: ProtocolDefinition['swarm'] = { colocatedClients: true, options: alockSwarmOptions };

export interface AlockSeedOptions {
  /** The profile the seed draws from; default ALock's own (pauses, node kills, cuts). */
  readonly swarm?: ProtocolDefinition['swarm'];
  /** Win over the drawn options (mutants, fixed budgets). */
  readonly options?: ProtocolOptions;
  /** Workload fields the mix does not draw (a hot lock, short timeouts). */
  readonly spec?: Partial<WorkloadSpec>;
}

export interface AlockSeed {
  readonly result: SwarmSeedResult;
  /** Present when the run got as far as ALock's judge (no exclusion violation in the history). */
  readonly run?: InMemoryRunResult;
  readonly invariants?: InvariantReport;
  readonly budgets?: { readonly localBudget: number; readonly remoteBudget: number };
}

/** One swarm seed with at least one client on the memory node (both cohorts), judged by ALock's invariants too. */
export async function runAlockSeed(seed: number, how: AlockSeedOptions = {}): Promise<AlockSeed> {
  const events: AlockEvent[] = [];
  const protocol: ProtocolDefinition = { ...observedAlock((event) => events.push(event)), swarm: how.swarm ?? alock.swarm };
  let judged: Omit<AlockSeed, 'result'> = {};
  const judge = (run: InMemoryRunResult, mix: { readonly options: ProtocolOptions }): string | undefined => {
    const { localBudget, remoteBudget } = readAlockOptions(mix.options);
    const invariants = checkAlockEvents(events, { localBudget, remoteBudget });
    judged = { run, invariants, budgets: { localBudget, remoteBudget } };
    if (!invariants.ok) return invariants.violations.slice(0, 3).join('\n');
    // I6 as a bound over the whole run: no head saw more entries of the other class than its budget.
    const bound = Math.max(localBudget, remoteBudget);
    return invariants.maxOvertakes > bound ? `I6: a head was overtaken ${invariants.maxOvertakes} times (budgets ${localBudget}/${remoteBudget})` : undefined;
  };
  const result = await runSwarmSeed(protocol, seed, how.options ?? {}, { ...(how.spec ? { spec: how.spec } : {}), minColocatedClients: 1, judge });
  return { result, ...judged };
}

/** The first seed in `first…last` whose run `caught` flags. */
export async function huntSeed(first: number, last: number, how: AlockSeedOptions, caught: (seed: AlockSeed) => boolean): Promise<number | undefined> {
  for (let seed = first; seed <= last; seed++) if (caught(await runAlockSeed(seed, how))) return seed;
  return undefined;
}
