// Worker-thread entry of `bench`, `check`, `check --swarm` and `reproduce` with `--workers N`: one job per message.
import { parentPort } from 'node:worker_threads';
import { ConfigError } from '@lockfabric/ports';
import { benchInMemory } from '../commands/bench-in-memory.js';
import type { InMemoryBenchJob } from '../commands/bench-in-memory.js';
import { checkSeed } from '../commands/check-seed.js';
import type { CheckSeedJob } from '../commands/check-seed.js';
import { measurePoint } from '../reproduce/measure.js';
import type { PointJob } from '../reproduce/experiment.js';
import { runSwarmJob } from '../swarm/jobs.js';
import type { SwarmJob } from '../swarm/jobs.js';
import type { WorkerMessage, WorkerReply } from './pool.js';

const TASKS: Record<string, (job: never) => Promise<unknown>> = {
  bench: async (job: InMemoryBenchJob) => (await benchInMemory(job)).report,
  check: (job: CheckSeedJob) => checkSeed(job),
  swarm: (job: SwarmJob) => runSwarmJob(job),
  reproduce: (job: PointJob) => measurePoint(job),
};

parentPort?.on('message', (message: WorkerMessage<never>) => {
  const task = TASKS[message.task];
  const reply = (r: WorkerReply<unknown>) => parentPort?.postMessage(r);
  if (!task) return reply({ ok: false, message: `unknown worker task ${JSON.stringify(message.task)}` });
  task(message.job).then(
    (result) => reply({ ok: true, result }),
    (error: unknown) =>
      reply(error instanceof ConfigError ? { ok: false, message: error.message, configIssues: error.issues } : { ok: false, message: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
