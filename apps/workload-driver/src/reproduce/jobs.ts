// Runs point jobs on this thread or on worker threads; results come back in job order, so the
// merged result is the same for any worker count (each job is a deterministic sim run).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LockFabricError } from '@lockfabric/ports';
import type { Measure, PointJob } from './experiment.js';
import { measurePoint } from './measure.js';

export class ReproduceWorkerError extends LockFabricError {
  readonly code = 'REPRODUCE_WORKER';
}

/** The compiled worker script (under vitest this module runs from src/, so it uses dist/). */
function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  const compiled = here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/reproduce/worker.js', import.meta.url)) : fileURLToPath(new URL('./worker.js', import.meta.url));
  if (!existsSync(compiled)) throw new ReproduceWorkerError(`reproduce worker script ${compiled} is missing: build workload-driver first`);
  return compiled;
}

type Reply = { ok: true; measure: Measure } | { ok: false; error: string };

/** Runs `jobs` on `workers` threads (1: this thread); each worker takes the next job when it finishes one. */
export async function runPointJobs(jobs: readonly PointJob[], workers: number, onResult: (done: number, index: number) => void = () => {}): Promise<Measure[]> {
  const results = new Array<Measure>(jobs.length);
  let done = 0;
  if (workers <= 1) {
    for (const [i, job] of jobs.entries()) {
      results[i] = await measurePoint(job);
      onResult(++done, i);
    }
    return results;
  }
  const script = workerScript();
  let next = 0;
  const lane = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const worker = new Worker(script);
      let current = -1;
      const feed = (): void => {
        if (next >= jobs.length) {
          void worker.terminate().then(() => resolve());
          return;
        }
        current = next++;
        worker.postMessage(jobs[current]);
      };
      worker.on('message', (reply: Reply) => {
        if (!reply.ok) {
          void worker.terminate();
          reject(new ReproduceWorkerError(`reproduce job ${current} (${jobs[current]?.protocol}) failed: ${reply.error}`));
          return;
        }
        results[current] = reply.measure;
        onResult(++done, current);
        feed();
      });
      worker.on('error', (error) => reject(new ReproduceWorkerError(`reproduce worker failed on job ${current}: ${error.message}`)));
      feed();
    });
  await Promise.all(Array.from({ length: Math.min(workers, jobs.length) }, lane));
  return results;
}
