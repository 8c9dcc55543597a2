// Splitting a swarm sweep into shards and merging the shards' files back into one result.
import type { SwarmSeedResult } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { ConfigError } from '@lockfabric/ports';
import type { SwarmJob } from '../swarm/jobs.js';

/** What every shard of one sweep agrees on; a shard file from another sweep is refused at merge. */
export interface SweepPlan {
  /** Protocol ids in sweep order (`all` already expanded). */
  readonly protocols: readonly string[];
  readonly seeds: number;
  readonly firstSeed: number;
  readonly shards: number;
  readonly options: ProtocolOptions;
}

/** One shard's file: its slice `[from, to)` of the plan's job list and the results, in job order. */
export interface ShardFile {
  readonly sweep: 'swarm';
  readonly plan: SweepPlan;
  readonly index: number;
  readonly from: number;
  readonly to: number;
  readonly results: readonly SwarmSeedResult[];
}

/** The plan's jobs: every seed of the first protocol, then of the next — the order `check --swarm` runs. */
export function planJobs(plan: SweepPlan): SwarmJob[] {
  return plan.protocols.flatMap((protocol) => Array.from({ length: plan.seeds }, (_, i) => ({ protocol, seed: plan.firstSeed + i, options: plan.options })));
}

/**
 * Shard `index` of `shards` takes a contiguous slice of `total` jobs; the first `total % shards`
 * shards take one more. Contiguous, so concatenating the shards in index order is the job order.
 */
export function shardSlice(total: number, shards: number, index: number): { from: number; to: number } {
  const base = Math.floor(total / shards);
  const extra = total % shards;
  const from = index * base + Math.min(index, extra);
  return { from, to: from + base + (index < extra ? 1 : 0) };
}

export function shardFileName(index: number, shards: number): string {
  return `shard-${String(index).padStart(4, '0')}-of-${shards}.json`;
}

/**
 * The merged results of a sweep, in job order, from its shard files in any order. Every problem
 * (a missing or repeated shard, a file of another sweep, a shard whose results are not its slice)
 * is listed in one ConfigError: a merge of an incomplete sweep must not pass for a complete one.
 */
export function mergeShards(files: readonly { name: string; file: ShardFile }[]): { plan: SweepPlan; results: SwarmSeedResult[] } {
  const problems: string[] = [];
  if (files.length === 0) throw new ConfigError(['no shard files (shard-*-of-*.json) to merge']);
  const plan = files[0]!.file.plan;
  const key = JSON.stringify(plan);
  const jobs = planJobs(plan);
  const byIndex = new Map<number, ShardFile>();
  for (const { name, file } of files) {
    if (file.sweep !== 'swarm' || JSON.stringify(file.plan) !== key) {
      problems.push(`${name}: belongs to another sweep (plan ${JSON.stringify(file.plan)}, expected ${key})`);
      continue;
    }
    if (byIndex.has(file.index)) problems.push(`${name}: shard ${file.index} appears twice`);
    byIndex.set(file.index, file);
    const slice = shardSlice(jobs.length, plan.shards, file.index);
    const wrong = file.from !== slice.from || file.to !== slice.to || file.results.length !== slice.to - slice.from || file.results.some((r, i) => r.protocol !== jobs[slice.from + i]?.protocol || r.seed !== jobs[slice.from + i]?.seed);
    if (wrong) problems.push(`${name}: its results are not jobs ${slice.from}…${slice.to - 1} of the sweep`);
  }
  for (let i = 0; i < plan.shards; i++) if (!byIndex.has(i)) problems.push(`shard ${i} of ${plan.shards} is missing (${shardFileName(i, plan.shards)})`);
  if (problems.length > 0) throw new ConfigError(problems);
  const results = Array.from({ length: plan.shards }, (_, i) => byIndex.get(i)!.results).flat();
  return { plan, results };
}
