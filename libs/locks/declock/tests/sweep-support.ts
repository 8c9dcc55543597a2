import { collectAcquires } from '@lockfabric/check';
import { runSwarmSeed } from '@lockfabric/harness';
import type { InMemoryRunResult, SwarmMix, SwarmSeedResult } from '@lockfabric/harness';
import type { ProtocolDefinition, ProtocolOptions, SwarmProfile } from '@lockfabric/locks-common';
import type { Span, Trace } from '@lockfabric/ports';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { checkTaskFairness, describeTaskFairViolation } from '../src/index.js';
import type { TaskFairReport } from '../src/index.js';

/**
 * DecLock's sweeps on the swarm runner (one generator of seeds and faults, one checker path):
 * each seed's workload, jitter and clocks come from the swarm's mix, judged by the swarm
 * (exclusion, liveness, the heal probe), and this file adds what DecLock's sweeps count on top:
 * resets by reason, verbs per first-try acquire, and task-fairness (bypass) over the history.
 */

/** No fault at all (jitter, clock drift and coordinator crashes only): DecLock's own options, not drawn ones. */
export const FAULT_FREE: SwarmProfile = {};

/** Counts resets (by reason) and the worst verb count of a first-try acquire. */
export function sweepTrace(): { trace: Trace; resets: Map<string, number>; maxFirstTryAcquireVerbs: () => number } {
  const resets = new Map<string, number>();
  let maxVerbs = 0;
  const trace: Trace = {
    startSpan(name, options) {
      const attributes: Record<string, unknown> = { ...(options?.attributes ?? {}) };
      const span: Span = {
        context: { traceId: 't', spanId: 's', traceFlags: 0 },
        setAttribute: (key, value) => void (attributes[key] = value),
        addLink: () => undefined,
        recordError: () => undefined,
        end: () => {
          if (name === 'lock.reset') {
            const reason = String(attributes['declock.reset.reason']);
            resets.set(reason, (resets.get(reason) ?? 0) + 1);
          } else if (name === 'lock.acquire' && attributes['lockfabric.outcome'] === 'granted' && attributes['lockfabric.retries'] === 0) {
            maxVerbs = Math.max(maxVerbs, Number(attributes['lockfabric.verbs']));
          }
        },
      };
      return span;
    },
  };
  return { trace, resets, maxFirstTryAcquireVerbs: () => maxVerbs };
}

export interface SweepRun {
  /** The swarm's verdict on the seed (safety, liveness after healing, errors). */
  readonly swarm: SwarmSeedResult;
  /** The run, when its history passed exclusion (the judge below saw it). */
  readonly result?: InMemoryRunResult;
  /** Task-fairness over the history (absent when exclusion failed first). */
  readonly fairness?: TaskFairReport;
  readonly resets: Map<string, number>;
  readonly maxFirstTryAcquireVerbs: number;
  /** One line for a failing assertion: how to reproduce and what went wrong. */
  readonly why: string;
}

/** One swarm seed of `protocol` on the fault-free profile (or `swarm`), with DecLock's counts and fairness check. */
export async function sweepRun(
  protocol: ProtocolDefinition,
  seed: number,
  options: { protocolOptions?: ProtocolOptions; spec?: Partial<WorkloadSpec>; crashProbability?: number; fairnessBypass?: number; swarm?: SwarmProfile } = {},
): Promise<SweepRun> {
  const traced = sweepTrace();
  let judged: { result: InMemoryRunResult; fairness: TaskFairReport } | undefined;
  const judge = (result: InMemoryRunResult, mix: SwarmMix): undefined => {
    // Two FAAs posted closer together than the jitter may land in either order: that much slack.
    const fairness = checkTaskFairness([...collectAcquires(result.history).values()].flat(), { slackNs: mix.jitterNs + 1_000, maxBypass: options.fairnessBypass ?? 0 });
    judged = { result, fairness };
    return undefined;
  };
  const swarm = await runSwarmSeed({ ...protocol, swarm: options.swarm ?? FAULT_FREE }, seed, options.protocolOptions ?? {}, {
    trace: traced.trace,
    judge,
    ...(options.spec ? { spec: options.spec } : {}),
    ...(options.crashProbability !== undefined ? { crashProbability: options.crashProbability } : {}),
  });
  const why = [
    swarm.description,
    ...(swarm.failure ? [`${swarm.failure.kind}: ${swarm.failure.detail}`] : []),
    ...(judged?.fairness.violations.slice(0, 3).map(describeTaskFairViolation) ?? []),
    `resets ${JSON.stringify([...traced.resets])}`,
  ].join('\n');
  return { swarm, ...(judged ?? {}), resets: traced.resets, maxFirstTryAcquireVerbs: traced.maxFirstTryAcquireVerbs(), why };
}
