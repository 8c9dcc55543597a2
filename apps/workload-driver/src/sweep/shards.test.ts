import { ConfigError } from '@lockfabric/ports';
import { describe, expect, it } from 'vitest';
import { mergeShards, planJobs, shardFileName, shardSlice } from './shards.js';
import type { ShardFile, SweepPlan } from './shards.js';

const plan: SweepPlan = { protocols: ['caslock', 'dslr'], seeds: 5, firstSeed: 10, shards: 3, options: {} };

/** Shard files as `sweep run` writes them, with a fake result per job (protocol, seed, a digest). */
function shards(p: SweepPlan, slice = shardSlice): { name: string; file: ShardFile }[] {
  const jobs = planJobs(p);
  return Array.from({ length: p.shards }, (_, index) => {
    const { from, to } = slice(jobs.length, p.shards, index);
    const results = jobs.slice(from, to).map((j) => ({ protocol: j.protocol, seed: j.seed, description: '', digest: `${j.protocol}-${j.seed}`, simEvents: 1 }));
    return { name: shardFileName(index, p.shards), file: { sweep: 'swarm' as const, plan: p, index, from, to, results } };
  });
}

/** The mutant slice: every shard takes floor(total / shards) jobs, so the remainder is never run. */
const floorOnly = (total: number, n: number, index: number) => ({ from: index * Math.floor(total / n), to: (index + 1) * Math.floor(total / n) });

describe('sweep shards', () => {
  it('the slices of any shard count cover every job exactly once, in order', () => {
    for (const total of [1, 7, 10, 64]) {
      for (const n of [1, 2, 3, 7, 100]) {
        const covered = Array.from({ length: n }, (_, i) => shardSlice(total, n, i)).flatMap(({ from, to }) => Array.from({ length: to - from }, (_, k) => from + k));
        expect(covered).toStrictEqual(Array.from({ length: total }, (_, k) => k));
      }
    }
  });

  it('merging the shards in any order gives the jobs in sweep order', () => {
    const files = shards(plan).reverse();
    const { results } = mergeShards(files);
    expect(results.map((r) => `${r.protocol}:${r.seed}`)).toStrictEqual(planJobs(plan).map((j) => `${j.protocol}:${j.seed}`));
  });

  it('refuses a missing shard, a repeated one and one of another sweep, listing each', () => {
    const files = shards(plan);
    const other = shards({ ...plan, seeds: 6 })[2]!;
    const error = (() => {
      try {
        mergeShards([files[0]!, files[0]!, { name: 'x.json', file: other.file }]);
      } catch (e) {
        return e;
      }
    })() as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.issues.join('\n')).toMatch(/shard 0 appears twice[\s\S]*x\.json: belongs to another sweep[\s\S]*shard 1 of 3 is missing[\s\S]*shard 2 of 3 is missing/);
  });

  it('catches the mutant slicing that drops the remainder: its shards are not the plan\'s slices', () => {
    // 10 jobs over 3 shards: floor-only slicing runs 9 and never the tenth.
    const mutant = shards(plan, floorOnly);
    expect(mutant.reduce((n, f) => n + f.file.results.length, 0)).toBe(9);
    expect(() => mergeShards(mutant)).toThrow(/its results are not jobs/);
  });
});
