import { describe } from 'vitest';
import { wideSweep } from './support/wide-sweep.js';
import { FAULTS_10_BOTH_WAYS } from './support/workload.js';

// The wide shape at 10 % loss, duplication, reordering and delay on both links (machine→switch as
// well): clean over seeds 1–500 since the timeout-free and install rules of seeds 8 and 2
// (README, "Timeout-free and the link"); CI runs the first 100.
describe('fisslock wide sweep at 10% faults on both links', () => {
  wideSweep('FAULTS_10_BOTH_WAYS', FAULTS_10_BOTH_WAYS, 1, 100, 50);
});
