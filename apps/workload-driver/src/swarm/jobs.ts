// Runs swarm seeds on this thread or on worker threads; results come back in job order.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { runSwarmSeed } from '@lockfabric/harness';
import type { SwarmSeedResult } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { protocolById } from '@lockfabric/lock-catalog';
import { LockFabricError } from '@lockfabric/ports';

/** One unit of work: one protocol's seed, with the caller's protocol options. */
export interface SwarmJob {
  readonly protocol: string;
  readonly seed: number;
  readonly options: ProtocolOptions;
}

export class SwarmWorkerError extends LockFabricError {
  readonly code = 'SWARM_WORKER';
}

export function runSwarmJob(job: SwarmJob): Promise<SwarmSeedResult> {
  return runSwarmSeed(protocolById(job.protocol), job.seed, job.options);
}

/**
 * The compiled worker script. Under vitest this module runs from src/*.ts, which a worker thread
 * cannot load, so it uses the build in dist/ (build workload-driver first).
 */
function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  const compiled = here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/swarm/worker.js', import.meta.url)) : fileURLToPath(new URL('./worker.js', import.meta.url));
  if (!existsSync(compiled)) throw new SwarmWorkerError(`swarm worker script ${compiled} is missing: build workload-driver first`);
  return compiled;
}

/**
 * Runs `jobs` on `workers` threads (1: this thread). Each worker takes the next job when it
 * finishes one; results are stored by job index, so the merged list is the same for any count.
 */
export async function runSwarmJobs(jobs: readonly SwarmJob[], workers: number, onResult: (done: number, result: SwarmSeedResult) => void = () => {}): Promise<SwarmSeedResult[]> {
  const results = new Array<SwarmSeedResult>(jobs.length);
  let done = 0;
  if (workers <= 1) {
    for (const [i, job] of jobs.entries()) {
      results[i] = await runSwarmJob(job);
      onResult(++done, results[i]);
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
      worker.on('message', (result: SwarmSeedResult) => {
        results[current] = result;
        onResult(++done, result);
        feed();
      });
      worker.on('error', (error) => reject(new SwarmWorkerError(`swarm worker failed on job ${current}: ${error.message}`)));
      feed();
    });
  await Promise.all(Array.from({ length: Math.min(workers, jobs.length) }, lane));
  return results;
}
