// Worker-thread entry of `check --swarm --workers N`: runs one job per message, answers with its result.
import { parentPort } from 'node:worker_threads';
import { runSwarmJob } from './jobs.js';
import type { SwarmJob } from './jobs.js';

parentPort?.on('message', (job: SwarmJob) => {
  void runSwarmJob(job).then((result) => parentPort?.postMessage(result));
});
