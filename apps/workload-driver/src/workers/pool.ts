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
export type WorkerReply<R> = { readonly index: number } & ({ readonly ok: true; readonly result: R } | { readonly ok: false; readonly message: string; readonly configIssues?: readonly string[] });

/** A job as it crosses to a worker: the task names the function the worker runs it with; the index comes back with the reply. */
export interface WorkerMessage<J> {
  readonly task: string;
  readonly index: number;
  readonly job: J;
}

/** Where the jobs of one `runJobs` call ran: for tests and `--json` diagnostics, never for results. */
export interface JobCounts {
  /** Jobs run on the calling thread. */
  inThread: number;
  /** Jobs run by each worker thread. */
  perWorker: number[];
  /** Messages posted to workers (one per job). */
  messages: number;
}

/**
 * The compiled worker script, and the flags its thread starts with. Under vitest this module runs
 * from src/*.ts, which a worker thread cannot load, so it uses the build in dist/ (build
 * workload-driver first) and drops the `--conditions` that point workspace packages at sources.
 */
function workerScript(): { script: string; execArgv?: string[] } {
  const here = fileURLToPath(import.meta.url);
  const fromSource = here.endsWith('.ts');
  const script = fromSource ? fileURLToPath(new URL('../../dist/workers/worker.js', import.meta.url)) : fileURLToPath(new URL('./worker.js', import.meta.url));
  if (!existsSync(script)) throw new WorkerPoolError(`worker script ${script} is missing: build workload-driver first`);
  return fromSource ? { script, execArgv: withoutConditions(process.execArgv) } : { script };
}

function withoutConditions(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--conditions' || argv[i] === '-C') i++;
    else if (!argv[i]!.startsWith('--conditions=')) out.push(argv[i]!);
  }
  return out;
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

/** Yields to the event loop, so worker replies queued while this thread simulated are handled. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs `jobs` with `run` on this thread (workers ≤ 1) or over `workers` lanes: this thread is one
 * of them and `workers - 1` worker threads run `task`. Decision 0019: a worker thread is a whole
 * V8 isolate (modules, JIT warm-up, GC helpers), so the idle main thread taking a lane gives one
 * more core's worth of simulation for one isolate fewer. A worker holds a second job while
 * more jobs remain than lanes, so it never waits for this thread to look up from a simulation.
 * Results are stored by job index, so the merged list is the same for any worker count;
 * `onResult` sees them in job order too, so what a command prints does not depend on the count.
 */
export async function runJobs<J, R>(
  jobs: readonly J[],
  workers: number,
  task: string,
  run: (job: J) => Promise<R>,
  onResult: (index: number, result: R) => void = () => {},
  counts: JobCounts = { inThread: 0, perWorker: [], messages: 0 },
): Promise<R[]> {
  const merged = new InJobOrder<R>(jobs.length, onResult);
  const results = merged.results;
  const threads = Math.min(workers, jobs.length) - 1;
  if (threads <= 0) {
    for (const [i, job] of jobs.entries()) {
      merged.arrive(i, await run(job));
      counts.inThread++;
    }
    return results;
  }
  const { script, execArgv } = workerScript();
  const lanes = threads + 1;
  let next = 0;
  let failure: Error | undefined;
  const pool: Worker[] = [];
  const fail = (error: Error): void => {
    failure ??= error;
    for (const w of pool) void w.terminate();
  };
  const workerLane = (slot: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const worker = new Worker(script, execArgv ? { execArgv } : {});
      pool.push(worker);
      counts.perWorker[slot] = 0;
      let inFlight = 0;
      const feed = (): void => {
        // A second job only while there are more jobs left than lanes to share them.
        while (failure === undefined && next < jobs.length && (inFlight === 0 || (inFlight === 1 && jobs.length - next > lanes))) {
          const message: WorkerMessage<J> = { task, index: next, job: jobs[next] as J };
          next++;
          inFlight++;
          counts.messages++;
          worker.postMessage(message);
        }
        if (inFlight === 0) void worker.terminate().then(() => resolve());
      };
      worker.on('message', (reply: WorkerReply<R>) => {
        inFlight--;
        if (!reply.ok) return fail(replyError(reply));
        try {
          merged.arrive(reply.index, reply.result);
        } catch (error) {
          return fail(error instanceof Error ? error : new WorkerPoolError(String(error)));
        }
        counts.perWorker[slot] = (counts.perWorker[slot] ?? 0) + 1;
        feed();
      });
      worker.on('error', (error) => fail(new WorkerPoolError(`worker ${slot} failed: ${error.message}`)));
      worker.on('exit', (code) => {
        // A worker gone with jobs in hand (process.exit in a job, an abort) must not leave holes.
        if (inFlight > 0) fail(new WorkerPoolError(`worker ${slot} exited (code ${code}) with ${inFlight} job(s) unfinished`));
        resolve();
      });
      feed();
    });
  const ownLane = async (): Promise<void> => {
    while (failure === undefined && next < jobs.length) {
      const index = next++;
      try {
        merged.arrive(index, await run(jobs[index] as J));
      } catch (error) {
        return fail(error instanceof Error ? error : new WorkerPoolError(String(error)));
      }
      counts.inThread++;
      await turn();
    }
  };
  const started = Array.from({ length: threads }, (_, slot) => workerLane(slot));
  await Promise.all([...started, ownLane()]);
  if (failure) throw failure;
  return results;
}
