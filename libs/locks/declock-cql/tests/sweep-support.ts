import { collectAcquires, summarizeVerdict } from '@lockfabric/check';
import { runInMemory } from '@lockfabric/harness';
import type { InMemoryRunResult } from '@lockfabric/harness';
import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { Span, Trace } from '@lockfabric/ports';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { checkTaskFairness, describeTaskFairViolation } from '@lockfabric/lock-declock';
import type { TaskFairReport } from '@lockfabric/lock-declock';
import { mulberry32 } from '@lockfabric/random';

/** Deterministic parameters per seed (mulberry32). */
export function seeded(seed: number): { int(lo: number, hi: number): number; pick<T>(values: readonly T[]): T } {
  const next = mulberry32(seed * 0x9e3779b1);
  return {
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (values) => values[Math.floor(next() * values.length)] as (typeof values)[number],
  };
}

/** Small random workloads: 4–12 clients, 1–8 locks (mostly few), 100–250 ops, mixed modes. */
export function sweepSpec(seed: number, overrides: Partial<WorkloadSpec> = {}): { spec: WorkloadSpec; computeNodes: number; jitterNs: number } {
  const r = seeded(seed);
  const spec: WorkloadSpec = {
    clients: r.int(4, 12),
    locks: r.pick([1, 1, 2, 3, 4, 8]),
    readRatio: r.pick([0, 0.3, 0.5, 0.5, 0.8, 1]),
    distribution: r.pick(['uniform', { zipf: 0.99 }] as const),
    operations: r.int(100, 250),
    thinkNs: r.int(0, 2_000),
    criticalSectionNs: r.pick([0, 500, 1_000, 3_000]),
    seed,
    ...overrides,
  };
  return { spec, computeNodes: r.int(2, 4), jitterNs: r.pick([200, 500, 2_000]) };
}

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
  readonly result: InMemoryRunResult;
  readonly fairness: TaskFairReport;
  readonly resets: Map<string, number>;
  readonly maxFirstTryAcquireVerbs: number;
  /** One line for a failing assertion: how to reproduce and what went wrong. */
  readonly why: string;
}

export async function sweepRun(
  protocol: ProtocolDefinition,
  seed: number,
  options: { protocolOptions?: ProtocolOptions; spec?: Partial<WorkloadSpec>; crashProbability?: number; fairnessBypass?: number; computeNodes?: number } = {},
): Promise<SweepRun> {
  const drawn = sweepSpec(seed, options.spec);
  const { spec, jitterNs } = drawn;
  const computeNodes = options.computeNodes ?? drawn.computeNodes;
  const traced = sweepTrace();
  const result = await runInMemory({
    substrate: 'sim',
    protocol,
    spec,
    computeNodes,
    jitterNs,
    trace: traced.trace,
    ...(options.protocolOptions ? { protocolOptions: options.protocolOptions } : {}),
    ...(options.crashProbability ? { crashProbability: options.crashProbability } : {}),
  });
  // Two FAAs posted closer together than the jitter may land in either order: that much slack.
  const fairness = checkTaskFairness([...collectAcquires(result.history).values()].flat(), { slackNs: jitterNs + 1_000, maxBypass: options.fairnessBypass ?? 0 });
  const why = [
    `seed ${seed} ${protocol.id} ${JSON.stringify(options.protocolOptions ?? {})} spec ${JSON.stringify(spec)} cns ${computeNodes} jitter ${jitterNs}`,
    summarizeVerdict(result.verdict),
    ...fairness.violations.slice(0, 3).map(describeTaskFairViolation),
    `resets ${JSON.stringify([...traced.resets])} cutOff ${result.cutOff}`,
  ].join('\n');
  return { result, fairness, resets: traced.resets, maxFirstTryAcquireVerbs: traced.maxFirstTryAcquireVerbs(), why };
}
