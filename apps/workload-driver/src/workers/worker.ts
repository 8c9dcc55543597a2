// Worker-thread entry of `bench`, `check`, `check --swarm` and `reproduce` with `--workers N`.
// A task's modules load on its first job, so a swarm worker does not load the bench report code.
import { parentPort } from 'node:worker_threads';
import { ConfigError } from '@lockfabric/ports';
import type { InMemoryBenchJob } from '../commands/bench-in-memory.js';
import type { CheckSeedJob } from '../commands/check-seed.js';
import type { PointJob } from '../reproduce/experiment.js';
import type { SwarmJob } from '../swarm/jobs.js';
import type { WorkerMessage, WorkerReply } from './pool.js';

type Task = (job: never) => Promise<unknown>;

const TASKS: Record<string, () => Promise<Task>> = {
  bench: async () => {
    const { benchInMemory } = await import('../commands/bench-in-memory.js');
    return async (job: InMemoryBenchJob) => (await benchInMemory(job)).report;
  },
  check: async () => (await import('../commands/check-seed.js')).checkSeed as (job: CheckSeedJob) => Promise<unknown>,
  swarm: async () => (await import('../swarm/jobs.js')).runSwarmJob as (job: SwarmJob) => Promise<unknown>,
  reproduce: async () => (await import('../reproduce/measure.js')).measurePoint as (job: PointJob) => Promise<unknown>,
};

const loaded = new Map<string, Promise<Task>>();

function flatten(index: number, error: unknown): WorkerReply<never> {
  if (error instanceof ConfigError) return { index, ok: false, message: error.message, configIssues: error.issues };
  return { index, ok: false, message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

// Jobs run one after another in arrival order: a second queued job waits for the first.
let queue: Promise<void> = Promise.resolve();

parentPort?.on('message', (message: WorkerMessage<never>) => {
  const reply = (r: WorkerReply<unknown>) => parentPort?.postMessage(r);
  const load = TASKS[message.task];
  if (!load) return reply({ index: message.index, ok: false, message: `unknown worker task ${JSON.stringify(message.task)}` });
  let task = loaded.get(message.task);
  if (!task) loaded.set(message.task, (task = load()));
  const ready = task;
  queue = queue.then(() =>
    ready.then((t) => t(message.job)).then(
      (result) => reply({ index: message.index, ok: true, result }),
      (error: unknown) => reply(flatten(message.index, error)),
    ),
  );
});
