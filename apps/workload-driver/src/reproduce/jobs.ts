// Runs point jobs on this thread or on worker threads; results come back in job order, so the
// merged result is the same for any worker count (each job is a deterministic sim run).
import { runJobs } from '../workers/pool.js';
import type { Measure, PointJob } from './experiment.js';
import { measurePoint } from './measure.js';

/** Runs `jobs` on `workers` threads (1: this thread). */
export function runPointJobs(jobs: readonly PointJob[], workers: number, onResult: (done: number, index: number) => void = () => {}): Promise<Measure[]> {
  return runJobs(jobs, workers, 'reproduce', measurePoint, (index) => onResult(index + 1, index));
}
