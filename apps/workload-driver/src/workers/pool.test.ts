import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WorkerJobError, runOnWorkers } from './pool.js';

// A worker script over the built pool: doubles a number after a delay that reverses the order in
// which jobs finish, and rejects job 13 (the case that used to leave `check --swarm` waiting forever).
const built = pathToFileURL(fileURLToPath(new URL('../../dist/workers/pool.js', import.meta.url))).href;
const dir = mkdtempSync(join(tmpdir(), 'lf-pool-'));
const script = join(dir, 'worker.mjs');
writeFileSync(
  script,
  `import { serveJobs } from ${JSON.stringify(built)};
serveJobs(async (n) => {
  await new Promise((r) => setTimeout(r, (10 - n) * 3));
  if (n === 13) throw new Error('unlucky job');
  return n * 2;
});
`,
);
const run = async (n: number) => n * 2;
// The test process resolves workspace packages to their sources; the built worker must not.
const workerExecArgv: string[] = [];

describe('runOnWorkers', () => {
  it('returns results in job order for any worker count', async () => {
    const jobs = [1, 2, 3, 4, 5, 6, 7];
    const seen: number[] = [];
    const here = await runOnWorkers({ jobs, workers: 1, script: () => script, run, describe: String, workerExecArgv });
    const threads = await runOnWorkers({ jobs, workers: 3, script: () => script, run, describe: String, workerExecArgv, onResult: (done) => seen.push(done) });
    expect(threads).toEqual(here);
    expect(here).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('turns a job that fails in a worker into a typed error naming the job', async () => {
    const failing = runOnWorkers({ jobs: [1, 13, 2], workers: 2, script: () => script, run, describe: (n) => `job ${n}`, workerExecArgv });
    await expect(failing).rejects.toBeInstanceOf(WorkerJobError);
    await expect(failing).rejects.toThrow('job 13 failed: unlucky job');
  });
});
