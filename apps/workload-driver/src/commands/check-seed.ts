// One seed of plain `lockfabric check`: a sim run and its verdict, as a job a worker thread can take.
import { summarizeVerdict } from '@lockfabric/check';
import type { CostModel } from '@lockfabric/fabric';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { runInMemory } from '../run/in-memory.js';

export interface CheckSeedJob {
  readonly protocol: string;
  readonly protocolOptions: ProtocolOptions;
  /** The workload with this seed's `seed`. */
  readonly spec: WorkloadSpec;
  readonly jitterNs: number;
  readonly crashProbability: number;
  readonly costModel: CostModel;
}

export interface CheckSeedOutcome {
  readonly seed: number;
  readonly kind?: 'exclusion' | 'liveness' | 'crash';
  readonly detail?: string;
  readonly violations: number;
}

/**
 * Runs one seed; a run that throws is a `crash` outcome, except a configuration the protocol
 * refuses (its client factory's ConfigError), which is the user's to fix: it propagates (exit 2).
 */
export async function checkSeed(job: CheckSeedJob): Promise<CheckSeedOutcome> {
  const { protocol, protocolOptions, spec, jitterNs, crashProbability, costModel } = job;
  try {
    const result = await runInMemory({ substrate: 'sim', protocol, protocolOptions, spec, jitterNs, costModel, ...(crashProbability > 0 ? { crashProbability } : {}) });
    const violations = result.verdict.violations.length;
    if (violations > 0) return { seed: spec.seed, kind: 'exclusion', detail: summarizeVerdict(result.verdict, 2), violations };
    if (!result.verdict.ok) return { seed: spec.seed, kind: 'liveness', detail: summarizeVerdict(result.verdict, 2), violations };
    return { seed: spec.seed, violations };
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    return { seed: spec.seed, kind: 'crash', detail: error instanceof Error ? (error.stack ?? error.message) : String(error), violations: 0 };
  }
}
