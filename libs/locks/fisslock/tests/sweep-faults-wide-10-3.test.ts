import { describe } from 'vitest';
import { FAULTS_10 } from './support/workload.js';
import { wideSweep } from './support/wide-sweep.js';

// Every seed at 10% loss, duplication, reordering and delay, on the contended wide shape (8 locks,
// 3 nodes × 2 clients × 40 ops on 4 hot locks); seeds 1–500 are split over four files so that
// vitest runs them in parallel.
describe('fisslock wide sweep at 10% faults (part 3 of 4)', () => {
  wideSweep('FAULTS_10', FAULTS_10, 251, 375);
});
