// One pool of worker threads for independent simulations: bench protocols, check seeds, swarm
// seeds and reproduce runs. node:worker_threads is enough: jobs are few and long (a whole
// simulation each), so a pooling library would add a dependency and no speed.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ConfigError, LockFabricError } from '@lockfabric/ports';

export class WorkerPoolError extends LockFabricError {
  readonly code = 'WORKER_POOL';
}

/** What a worker sends back for one job: its result, or the error it threw, flattened for the wire. */
export type WorkerReply<R> = { readonly ok: true; readonly result: R } | { readonly ok: false; readonly message: string; readonly configIssues?: readonly string[] };

/** A job as it crosses to a worker: the task names the function the worker runs it with. */
export interface WorkerMessage<J> {
  readonly task: string;
  readonly job: J;
}

/**
 * The compiled worker script. Under vitest this module runs from src/*.ts, which a worker thread
 * cannot load, so it uses the build in dist/ (build workload-driver first).
 */
function workerScript(): string {
  const here = fileURLToPath(import.meta.url);
  const compiled = here.endsWith('.ts') ? fileURLToPath(new URL('../../dist/workers/worker.js', import.meta.url)) : fileURLToPath(new URL('./worker.js', import.meta.url));
  if (!existsSync(compiled)) throw new WorkerPoolError(`worker script ${compiled} is missing: build workload-driver first`);
  return compiled;
}

/** A worker's error again as the caller's: configuration problems stay ConfigErrors (exit 2). */
export function replyError(reply: { message: string; configIssues?: readonly string[] | undefined }): Error {
  return reply.configIssues ? new ConfigError(reply.configIssues) : new WorkerPoolError(reply.message);
}

/**
 * The merge: results land at their job's index whenever they arrive, and are handed on strictly
 * in job order (a result waits for every earlier one). What makes N workers answer as one does.
 */
export class InJobOrder<R> {
  readonly results: R[];
  readonly #arrived: boolean[];
  #emitted = 0;

  constructor(
    readonly size: number,
    private readonly onResult: (index: number, result: R) => void,
  ) {
    this.results = new Array<R>(size);
    this.#arrived = new Array<boolean>(size).fill(false);
  }

  arrive(index: number, result: R): void {
    if (!Number.isInteger(index) || index < 0 || index >= this.size || this.#arrived[index]) throw new WorkerPoolError(`job ${index}: no such job, or its result came twice`);
    this.results[index] = result;
    this.#arrived[index] = true;
    while (this.#emitted < this.size && this.#arrived[this.#emitted]) {
      this.onResult(this.#emitted, this.results[this.#emitted] as R);
      this.#emitted++;
    }
  }
}

/**
 * Runs `jobs` with `run` on this thread (workers ≤ 1) or as `task` on `workers` threads, each
 * taking the next job when it finishes one. Results are stored by job index, so the merged list is
 * the same for any worker count; `onResult` sees them in job order too (a result waits for the
 * ones before it), so what a command prints as it goes does not depend on the count either.
 */
export async function runJobs<J, R>(
  jobs: readonly J[],
  workers: number,
  task: string,
  run: (job: J) => Promise<R>,
  onResult: (index: number, result: R) => void = () => {},
): Promise<R[]> {
  const merged = new InJobOrder<R>(jobs.length, onResult);
  const settle = (index: number, result: R): void => merged.arrive(index, result);
  const results = merged.results;
  if (workers <= 1 || jobs.length <= 1) {
    for (const [i, job] of jobs.entries()) settle(i, await run(job));
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
        const message: WorkerMessage<J> = { task, job: jobs[current] as J };
        worker.postMessage(message);
      };
      worker.on('message', (reply: WorkerReply<R>) => {
        if (!reply.ok) {
          void worker.terminate();
          reject(replyError(reply));
          return;
        }
        settle(current, reply.result);
        feed();
      });
      worker.on('error', (error) => reject(new WorkerPoolError(`worker failed on job ${current}: ${error.message}`)));
      feed();
    });
  await Promise.all(Array.from({ length: Math.min(workers, jobs.length) }, lane));
  return results;
}
