import type { ProtocolDefinition, ProtocolOptions } from '@lockfabric/locks-common';
import type { WorkloadSpec } from '@lockfabric/workloads';
import { runInMemory } from './in-memory-run.js';
import type { InMemoryRunResult } from './in-memory-run.js';

/** A small hot workload whose shape varies with the seed: 4–11 clients over 2–3 compute nodes, 1–4 locks. */
export function crashSweepCase(seed: number, readRatios: readonly number[] = [0, 0.5, 0.9]): { spec: WorkloadSpec; computeNodes: number } {
  return {
    spec: {
      clients: 4 + (seed % 8),
      locks: 1 + (seed % 4),
      readRatio: readRatios[seed % readRatios.length]!,
      distribution: seed % 3 === 0 ? { zipf: 0.99 } : 'uniform',
      operations: 150,
      thinkNs: (seed * 97) % 1_500,
      criticalSectionNs: 300 + ((seed * 389) % 2_000),
      seed,
      timeoutMs: [0.05, 5][seed % 2]!,
    },
    computeNodes: 2 + (seed % 2),
  };
}

/** One seed of the sweep on `sim`; with crashes, waiters behind a crashed holder poll until a short timeout. */
export function runCrashSweepSeed(protocol: ProtocolDefinition, seed: number, protocolOptions: ProtocolOptions, crashProbability = 0, readRatios?: readonly number[]): Promise<InMemoryRunResult> {
  const { spec: drawn, computeNodes } = crashSweepCase(seed, readRatios);
  const spec = crashProbability > 0 ? { ...drawn, timeoutMs: 0.05 } : drawn;
  return runInMemory({ substrate: 'sim', protocol, protocolOptions, spec, computeNodes, ...(crashProbability > 0 ? { crashProbability } : {}) });
}

/**
 * Seeds 1…`seeds` of a protocol that cannot recover a crashed holder (no lease, no repair): every
 * third seed crashes clients instead of releasing, so their locks stay taken and waiters must end
 * with LockTimeoutError while nobody gets in beside them. Returns what went wrong per seed, and how
 * many timeouts and crashes the sweep saw (so a test can show both halves were exercised).
 */
export async function crashSweep(protocol: ProtocolDefinition, seeds: number, protocolOptions: ProtocolOptions, readRatios?: readonly number[]): Promise<{ problems: string[]; timeouts: number; crashes: number }> {
  const problems: string[] = [];
  let timeouts = 0;
  let crashes = 0;
  for (let seed = 1; seed <= seeds; seed++) {
    const result = await runCrashSweepSeed(protocol, seed, protocolOptions, seed % 3 === 0 ? 0.05 : 0, readRatios);
    const errors = result.verdict.liveness.counts.acquireErrors;
    const untyped = Object.keys(errors).filter((name) => name !== 'LockTimeoutError');
    if (result.cutOff) problems.push(`seed ${seed}: cut off with acquires pending`);
    if (result.verdict.violations.length > 0) problems.push(`seed ${seed}: ${result.verdict.violations.length} exclusion violations`);
    if (!result.verdict.liveness.ok) problems.push(`seed ${seed}: liveness`);
    if (untyped.length > 0) problems.push(`seed ${seed}: acquires failed with ${untyped.join(', ')}`);
    timeouts += errors.LockTimeoutError ?? 0;
    crashes += result.crashed.size;
  }
  return { problems, timeouts, crashes };
}
