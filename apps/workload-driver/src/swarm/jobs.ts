// Runs swarm seeds on this thread or on worker threads; results come back in job order.
import { runSwarmSeed } from '@lockfabric/harness';
import type { ForcibleFault, SwarmSeedResult } from '@lockfabric/harness';
import type { ProtocolOptions } from '@lockfabric/locks-common';
import { protocolById } from '@lockfabric/lock-catalog';
import { runJobs } from '../workers/pool.js';

/** One unit of work: one protocol's seed, with the caller's protocol options. */
export interface SwarmJob {
  readonly protocol: string;
  readonly seed: number;
  readonly options: ProtocolOptions;
  /** `--force-faults`: faults on whatever the protocol's profile says. */
  readonly force?: readonly ForcibleFault[];
}

export function runSwarmJob(job: SwarmJob): Promise<SwarmSeedResult> {
  return runSwarmSeed(protocolById(job.protocol), job.seed, job.options, job.force ? { force: job.force } : {});
}

/** Runs `jobs` on `workers` threads (1: this thread); the merged list is the same for any count. */
export function runSwarmJobs(jobs: readonly SwarmJob[], workers: number, onResult: (done: number, result: SwarmSeedResult) => void = () => {}): Promise<SwarmSeedResult[]> {
  return runJobs(jobs, workers, 'swarm', runSwarmJob, (index, result) => onResult(index + 1, result));
}
