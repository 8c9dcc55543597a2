// One pool of worker threads for every command that spreads independent simulations over cores
// (`check --swarm`, `reproduce`). Each job is plain data; results are stored by job index, so the
// merged list is the same for any worker count. node:worker_threads is enough here: jobs are few
// and long (a whole simulation each), so a pooling library would add a dependency and no speed.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, parentPort } from 'node:worker_threads';
import { LockFabricError } from '@lockfabric/ports';

export class WorkerJobError extends LockFabricError {
  readonly code = 'WORKER_JOB';
}

/** What a worker answers for one job: its result, or why it failed (a rejection, never a hang). */
type Reply<R> = { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: string };

/**
 * The compiled worker entry `distPath` (relative to the package root, e.g. `dist/swarm/worker.js`)
 * for a module at `moduleUrl`. Under vitest modules run from src/*.ts, which a worker thread cannot
 * load, so the build in dist/ is used (build workload-driver first).
 */
export function compiledWorkerScript(moduleUrl: string, distPath: string, sibling: string): string {
  const here = fileURLToPath(moduleUrl);
  const compiled = here.endsWith('.ts') ? fileURLToPath(new URL(`../../${distPath}`, moduleUrl)) : fileURLToPath(new URL(sibling, moduleUrl));
  if (!existsSync(compiled)) throw new WorkerJobError(`worker script ${compiled} is missing: build workload-driver first`);
  return compiled;
}

export interface PoolRun<J, R> {
  readonly jobs: readonly J[];
  /** 1 runs every job on this thread. */
  readonly workers: number;
  /** The compiled worker script (called only when workers > 1). */
  readonly script: () => string;
  /** The job on this thread: what the worker script runs too (see {@link serveJobs}). */
  readonly run: (job: J) => Promise<R>;
  /** Names a job in an error ("shiftlock seed 17"). */
  readonly describe: (job: J) => string;
  readonly onResult?: (done: number, index: number, result: R) => void;
  /** Node flags of the worker threads (default: this process's). */
  readonly workerExecArgv?: readonly string[];
}

/** Runs every job; each worker thread takes the next job when it finishes one. */
export async function runOnWorkers<J, R>(p: PoolRun<J, R>): Promise<R[]> {
  const results = new Array<R>(p.jobs.length);
  let done = 0;
  if (p.workers <= 1) {
    for (const [i, job] of p.jobs.entries()) {
      results[i] = await p.run(job);
      p.onResult?.(++done, i, results[i]!);
    }
    return results;
  }
  const script = p.script();
  let next = 0;
  const lane = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const worker = new Worker(script, p.workerExecArgv ? { execArgv: [...p.workerExecArgv] } : {});
      let current = -1;
      const fail = (why: string): void => {
        void worker.terminate();
        reject(new WorkerJobError(`${p.describe(p.jobs[current]!)} failed: ${why}`));
      };
      const feed = (): void => {
        if (next >= p.jobs.length) {
          void worker.terminate().then(() => resolve());
          return;
        }
        current = next++;
        worker.postMessage(p.jobs[current]);
      };
      worker.on('message', (reply: Reply<R>) => {
        if (!reply.ok) return fail(reply.error);
        results[current] = reply.value;
        p.onResult?.(++done, current, reply.value);
        feed();
      });
      worker.on('error', (error) => fail(error.message));
      feed();
    });
  await Promise.all(Array.from({ length: Math.min(p.workers, p.jobs.length) }, lane));
  return results;
}

/** The worker side: answers each posted job with its result or its error. */
export function serveJobs<J, R>(run: (job: J) => Promise<R>): void {
  parentPort?.on('message', (job: J) => {
    run(job).then(
      (value) => parentPort?.postMessage({ ok: true, value } satisfies Reply<R>),
      (error: unknown) => parentPort?.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) } satisfies Reply<R>),
    );
  });
}
