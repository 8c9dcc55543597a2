import { describe } from 'vitest';
import { wideSweep } from './support/wide-sweep.js';
import { FAULTS_10_BOTH_WAYS } from './support/workload.js';

// Every seed at 10 % loss, duplication, reordering and delay on both links of the switch (the
// machine→switch copy too: a lost packet is never decided, a duplicate is decided twice), on the
// wide shape; seeds 1–500 over four files that vitest runs in parallel. Clean since the
// timeout-free and install rules of seeds 8 and 2 (README, "Timeout-free and the link").
describe('fisslock wide sweep at 10% faults on both links (part 2 of 4)', () => {
  wideSweep('FAULTS_10_BOTH_WAYS', FAULTS_10_BOTH_WAYS, 126, 250);
});
